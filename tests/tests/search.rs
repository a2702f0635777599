//! Search over an account's messages through the real cluster: scopes, isolation between
//! accounts, and messages of a deleted channel leaving the index.

use serde_json::{json, Value};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str};

fn hit_texts(results: &Value) -> Vec<(String, String)> {
    results["payload"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| {
            (
                hit["chat_id"].as_str().unwrap_or_default().to_owned(),
                hit["snippet"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Proves that `search` finds an account's messages newest first across chats (scope
/// `all`) or in one chat (scope `chat`), never another account's, and that deleting a
/// channel removes its messages from the results.
#[tokio::test]
async fn search_finds_the_account_s_messages_by_scope_and_forgets_deleted_channels() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("search", spec).await;
    let token = cluster.create_token("pia");
    let stranger_token = cluster.create_token("quinn");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut stranger = cluster.connect(1, "stranger").await;
    stranger.pair(&stranger_token, "stranger-1").await;

    phone
        .request(
            "channel.create",
            None,
            json!({ "name": "Trips", "kind": "channel" }),
        )
        .await;
    let created = phone.recv_until("channel.created").await.pop().unwrap();
    let trips = payload_str(&created, "chat_id").unwrap().to_owned();

    phone
        .send_message("Pack the blue umbrella for Zürich")
        .await;
    phone.collect_turn().await;
    phone
        .request(
            "message.send",
            Some(&trips),
            json!({ "text": "Book the umbrella museum in Zürich" }),
        )
        .await;
    phone.collect_turn().await;
    stranger.send_message("my umbrella is secret").await;
    stranger.collect_turn().await;

    let id = phone
        .request(
            "search",
            None,
            json!({ "query": "UMBRELLA zürich", "scope": "all" }),
        )
        .await;
    let results = phone.recv_until("search.results").await.pop().unwrap();
    assert_eq!(id_of(&results), Some(id));
    let hits = hit_texts(&results);
    assert!(hits.len() >= 2, "{results:#}");
    assert!(
        hits.iter().all(|(_, snippet)| !snippet.contains("secret")),
        "another account's message leaked: {results:#}"
    );
    assert_eq!(hits[0].0, trips, "newest first: {results:#}");

    phone
        .request(
            "search",
            None,
            json!({ "query": "umbrella", "scope": "chat", "chat_id": "android:default" }),
        )
        .await;
    let scoped = phone.recv_until("search.results").await.pop().unwrap();
    assert!(
        hit_texts(&scoped)
            .iter()
            .all(|(chat, _)| chat == "android:default"),
        "{scoped:#}"
    );
    assert!(!hit_texts(&scoped).is_empty());

    phone
        .request("channel.delete", Some(&trips), json!({}))
        .await;
    phone.recv_until("channel.deleted").await;
    phone
        .request("search", None, json!({ "query": "museum", "scope": "all" }))
        .await;
    let after_delete = phone.recv_until("search.results").await.pop().unwrap();
    assert!(hit_texts(&after_delete).is_empty(), "{after_delete:#}");
}
