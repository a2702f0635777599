//! The server API (`/api/v1`, admin key): publishing cron messages and notifications into
//! an account, managing device tokens (revoking closes live sessions on every gateway), and
//! listing devices.

use serde_json::{json, Value};

use iris_shared::inbound::{InboundRequest, ServerRequest, SERVER_DEVICE_ID};
use iris_shared::protocol::{Role, DEFAULT_CHAT_ID};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, of_type, payload_str, type_of};
use iris_tests::http_probe::{self, HttpResponse};
use iris_tests::inbound_append::enqueue;

const ADMIN_KEY: &str = "admin-key-for-tests-0123456789";

async fn call(
    cluster: &Cluster,
    gateway: usize,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> HttpResponse {
    let body = body.map(|b| b.to_string());
    http_probe::request(
        cluster.gateway_addr(gateway),
        method,
        path,
        key,
        body.as_deref(),
    )
    .await
    .unwrap_or_else(|err| panic!("{method} {path}: {err}"))
}

fn json_of(response: &HttpResponse) -> Value {
    serde_json::from_str(&response.body).unwrap_or_else(|_| panic!("not JSON: {response:?}"))
}

/// `GET path` on gateway 0 with the admin key: the answer, and field `field` of each item
/// of its list `list`.
async fn admin_list(
    cluster: &Cluster,
    path: &str,
    list: &str,
    field: &str,
) -> (Value, Vec<String>) {
    let answer = json_of(&call(cluster, 0, "GET", path, Some(ADMIN_KEY), None).await);
    let values = answer[list]
        .as_array()
        .unwrap_or_else(|| panic!("no list {list}: {answer}"))
        .iter()
        .filter_map(|item| item[field].as_str().map(str::to_owned))
        .collect();
    (answer, values)
}

fn spec() -> ClusterSpec {
    ClusterSpec::default()
        .gateways(2)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
}

/// Proves that the API refuses a wrong or missing admin key (401) and that a cron message
/// published on one gateway reaches a device on the other as a `message` of role `cron`,
/// once even when the same idempotency key is published twice, and lands in history and
/// search; a notification of kind `cron` reaches the device too; an unknown chat is 404.
#[tokio::test]
async fn published_cron_messages_and_notifications_reach_devices_once() {
    let cluster = Cluster::start("server-api-publish", spec()).await;
    let token = cluster.create_token("uma");
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;

    let path = "/api/v1/accounts/uma/messages";
    let body =
        json!({ "text": "Daily digest: 3 new papers on tardigrades", "key": "digest-2026-11-29" });
    assert_eq!(
        call(&cluster, 0, "POST", path, Some("wrong"), Some(body.clone()))
            .await
            .status,
        401
    );
    assert_eq!(
        call(&cluster, 0, "POST", path, None, Some(body.clone()))
            .await
            .status,
        401
    );
    for _ in 0..2 {
        let accepted = call(
            &cluster,
            0,
            "POST",
            path,
            Some(ADMIN_KEY),
            Some(body.clone()),
        )
        .await;
        assert_eq!(accepted.status, 202, "{accepted:?}");
    }
    let message = phone.recv_until("message").await.pop().unwrap();
    assert_eq!(payload_str(&message, "role"), Some("cron"), "{message}");
    assert_eq!(
        payload_str(&message, "text"),
        Some("Daily digest: 3 new papers on tardigrades")
    );

    let notice = json!({ "kind": "cron", "title": "Backup finished", "body": "42 files" });
    let accepted = call(
        &cluster,
        0,
        "POST",
        "/api/v1/accounts/uma/notifications",
        Some(ADMIN_KEY),
        Some(notice),
    )
    .await;
    assert_eq!(accepted.status, 202);
    let frames = phone.recv_until("notification").await;
    assert!(
        of_type(&frames, "message").is_empty(),
        "the repeated publish arrived twice: {frames:#?}"
    );
    let notification = frames.last().unwrap();
    assert_eq!(payload_str(notification, "kind"), Some("cron"));

    phone.request("history", None, json!({})).await;
    let history = phone.recv_until("history").await.pop().unwrap();
    let cron: Vec<&Value> = history["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "cron")
        .collect();
    assert_eq!(cron.len(), 1, "{history}");
    phone
        .request("search", None, json!({ "query": "tardigrades" }))
        .await;
    let found = phone.recv_until("search.results").await.pop().unwrap();
    assert_eq!(found["payload"]["hits"][0]["role"], "cron", "{found}");

    let missing = json!({ "chat_id": "android:chan_77", "text": "nowhere" });
    assert_eq!(
        call(&cluster, 0, "POST", path, Some(ADMIN_KEY), Some(missing))
            .await
            .status,
        404
    );
}

/// Proves the token routes: a token created over the API pairs a device, is listed (by id,
/// never in full), and revoking it over the API by that id closes that device's live session on the
/// other gateway with close code 4003 while a device paired with another token stays
/// connected; the devices route lists both devices with their gateway node.
#[tokio::test]
async fn api_tokens_pair_devices_and_revoking_one_closes_its_sessions_everywhere() {
    let cluster = Cluster::start("server-api-tokens", spec()).await;
    let created = call(
        &cluster,
        0,
        "POST",
        "/api/v1/accounts/vera/tokens",
        Some(ADMIN_KEY),
        Some(json!({ "name": "tablet" })),
    )
    .await;
    assert_eq!(created.status, 201, "{created:?}");
    let token = json_of(&created)["token"].as_str().unwrap().to_owned();
    let other_token = cluster.create_token("vera");

    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&other_token, "phone-1").await;

    let (listed, ids) = admin_list(&cluster, "/api/v1/accounts/vera/tokens", "tokens", "id").await;
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(
        !listed.to_string().contains(&token),
        "a listing shows a whole token"
    );

    let (devices, names) = admin_list(
        &cluster,
        "/api/v1/accounts/vera/devices",
        "devices",
        "device_id",
    )
    .await;
    assert_eq!(names, ["phone-1", "tablet-1"], "{devices}");
    assert_eq!(devices["devices"][0]["node"], "gw-2", "{devices}");

    let id = json_of(&created)["id"].as_str().unwrap().to_owned();
    assert!(ids.contains(&id), "{listed}");
    let by_id = format!("/api/v1/accounts/vera/tokens/{id}");
    let revoked = call(&cluster, 0, "DELETE", &by_id, Some(ADMIN_KEY), None).await;
    assert_eq!(revoked.status, 200, "{revoked:?}");
    let error = tablet.recv_until("error").await.pop().unwrap();
    assert_eq!(payload_str(&error, "code"), Some("auth"));
    assert_eq!(tablet.expect_close().await, Some(4003));

    let id = phone.request("ping", None, json!({})).await;
    let pong = phone.recv_until("pong").await.pop().unwrap();
    assert_eq!((type_of(&pong), id_of(&pong)), ("pong", Some(id)));
    let again = call(&cluster, 0, "DELETE", &by_id, Some(ADMIN_KEY), None).await;
    assert_eq!(again.status, 404);
}

/// Proves that messages published one after another into one chat are written in the order
/// they were sent and never wait for a worker: with the only worker paused, a device
/// receives them all, in that order, and history lists them so.
#[tokio::test]
async fn messages_published_one_after_another_arrive_in_order_without_waiting_for_a_worker() {
    const COUNT: usize = 40;
    let mut cluster = Cluster::start("server-api-order", spec()).await;
    let token = cluster.create_token("vic");
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;
    let texts: Vec<String> = (0..COUNT).map(|n| format!("note {n:02}")).collect();
    cluster.pause_worker(0);
    for text in &texts {
        let body = json!({ "text": text });
        let path = "/api/v1/accounts/vic/messages";
        let accepted = call(&cluster, 0, "POST", path, Some(ADMIN_KEY), Some(body)).await;
        assert_eq!(accepted.status, 202, "{accepted:?}");
    }
    let mut received = Vec::new();
    while received.len() < COUNT {
        let frame = phone.recv().await;
        if type_of(&frame) == "message" {
            received.push(payload_str(&frame, "text").unwrap_or_default().to_owned());
        }
    }
    assert_eq!(received, texts, "the device got the messages out of order");
    cluster.resume_worker(0);

    phone
        .request("history", None, json!({ "limit": COUNT }))
        .await;
    let history = phone.recv_until("history").await.pop().unwrap();
    let listed: Vec<&str> = history["payload"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(listed, texts, "history lists the messages out of order");
}

/// Proves that a server request an older gateway left in the inbound stream (it forwarded
/// publishes to the chat's worker) is still written, by the worker, once per idempotency
/// key (it is there twice), and that the gateway's own write of the same key later is that
/// one message too: the device gets no second copy before a later publish.
#[tokio::test]
async fn a_publish_forwarded_by_an_older_gateway_is_written_once_by_the_worker() {
    let cluster = Cluster::start("server-api-forwarded", spec()).await;
    let token = cluster.create_token("wes");
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;
    let forwarded = ServerRequest::Publish {
        role: Role::Cron,
        text: "forwarded report".into(),
        key: Some("report-1".into()),
    };
    let request = InboundRequest {
        account: "wes".into(),
        device_id: SERVER_DEVICE_ID.into(),
        chat_id: DEFAULT_CHAT_ID.into(),
        frame_json: serde_json::to_string(&forwarded).unwrap(),
        gateway: "gw-old".into(),
        received_ms: 1,
        trace_parent: None,
        user_message_key: None,
    };
    for _ in 0..2 {
        enqueue(&cluster, &request).await;
    }
    // Only the worker can write it now.
    let written = phone
        .recv_until_match("message", |frame| {
            payload_str(frame, "text") == Some("forwarded report")
        })
        .await;
    assert_eq!(
        of_type(&written, "message").len(),
        1,
        "one message before it: {written:?}"
    );
    let path = "/api/v1/accounts/wes/messages";
    let again = json!({ "text": "forwarded report", "key": "report-1" });
    let accepted = call(&cluster, 0, "POST", path, Some(ADMIN_KEY), Some(again)).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let later = json!({ "text": "later note" });
    let accepted = call(&cluster, 0, "POST", path, Some(ADMIN_KEY), Some(later)).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let texts: Vec<String> = phone
        .recv_until_match("message", |frame| {
            payload_str(frame, "text") == Some("later note")
        })
        .await
        .iter()
        .filter(|frame| type_of(frame) == "message")
        .filter_map(|frame| payload_str(frame, "text").map(str::to_owned))
        .collect();
    assert_eq!(texts, ["later note"], "the report came again: {texts:?}");
}

/// Proves that a body the API cannot read gets the API's JSON error like any other refusal,
/// not plain text: JSON that does not parse, a missing field and a wrong type are each a
/// 400 `bad_request` whose message names the problem.
#[tokio::test]
async fn unreadable_bodies_get_the_apis_json_error() {
    let cluster = Cluster::start("server-api-bodies", spec()).await;
    let path = "/api/v1/accounts/uma/messages";
    let bodies = [
        ("{not json", "key must be a string"),
        (r#"{"role": "cron"}"#, "missing field `text`"),
        (r#"{"text": 42}"#, "invalid type"),
    ];
    for (body, problem) in bodies {
        let response = http_probe::request(
            cluster.gateway_addr(0),
            "POST",
            path,
            Some(ADMIN_KEY),
            Some(body),
        )
        .await
        .unwrap_or_else(|err| panic!("POST {path}: {err}"));
        assert_eq!(response.status, 400, "{body}: {response:?}");
        let answer = json_of(&response);
        assert_eq!(answer["error"]["code"], "bad_request", "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(problem), "{body}: {message}");
    }
}
