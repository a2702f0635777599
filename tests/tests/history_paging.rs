//! History paging: pages of a chat's messages, oldest → newest within a page, walked
//! backwards with `before_message_id`, served by any gateway.

use serde_json::{json, Value};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str};

/// Turns written before paging; each stores a user and an assistant message.
const TURNS: usize = 520;
/// Page size used to walk the history.
const PAGE: u64 = 200;

fn texts(page: &Value) -> Vec<String> {
    page["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Proves that 1,040 stored messages are paged back from the newest with exact
/// boundaries: every page is oldest → newest, pages join without gaps or overlaps,
/// `has_more` is false only on the last page, and unknown chats or message ids are
/// answered with `not_found`.
#[tokio::test]
async fn history_pages_walk_back_through_a_thousand_messages_with_exact_boundaries() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
        // The history is written at machine rate, faster than a device may send.
        .gateway_env("IRIS_FRAME_RATE", "1000");
    let cluster = Cluster::start("history-paging", spec).await;
    let token = cluster.create_token("mona");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    for turn in 0..TURNS {
        phone.send_message(&format!("note {turn}")).await;
        phone.collect_turn().await;
    }

    let mut reader = cluster.connect(1, "reader").await;
    reader.pair(&token, "reader-1").await;
    let mut all: Vec<String> = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut payload = json!({ "limit": PAGE });
        if let Some(before) = &before {
            payload["before_message_id"] = json!(before);
        }
        let id = reader
            .request("history", Some("android:default"), payload)
            .await;
        let page = reader.recv_until("history").await.pop().unwrap();
        assert_eq!(id_of(&page), Some(id));
        let mut texts = texts(&page);
        let has_more = page["payload"]["has_more"].as_bool().unwrap();
        texts.extend(all);
        all = texts;
        if !has_more {
            break;
        }
        before = payload_str(&page, "oldest_message_id").map(str::to_owned);
        assert!(
            before.is_some(),
            "a page with more has an oldest_message_id: {page}"
        );
    }
    let expected: Vec<String> = (0..TURNS)
        .flat_map(|turn| [format!("note {turn}"), format!("echo: note {turn}")])
        .collect();
    assert_eq!(all.len(), expected.len());
    assert!(all == expected, "history differs from what was written");

    let id = reader
        .request("history", Some("android:chan_999"), json!({}))
        .await;
    let error = reader.recv_until("error").await.pop().unwrap();
    assert_eq!(
        (id_of(&error), payload_str(&error, "code")),
        (Some(id), Some("not_found"))
    );
    let id = reader
        .request(
            "history",
            None,
            json!({ "before_message_id": "no-such-message" }),
        )
        .await;
    let error = reader.recv_until("error").await.pop().unwrap();
    assert_eq!(
        (id_of(&error), payload_str(&error, "code")),
        (Some(id), Some("not_found"))
    );
}
