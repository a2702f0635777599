//! Push to offline devices through ntfy (a local recorder stands in for the ntfy server):
//! offline devices are pushed, online ones are not, revoked ones are not, and the device
//! that was pushed still gets the message itself, once, by `sync`.

use std::time::Duration;

use serde_json::json;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{of_type, payload_str};
use iris_tests::http_probe;
use iris_tests::http_recorder::HttpRecorder;

const ADMIN_KEY: &str = "admin-key-for-push-tests-0123456789";
/// How long a push may take to arrive.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

async fn publish(cluster: &Cluster, account: &str, text: &str) {
    let body = json!({ "text": text, "role": "cron" }).to_string();
    let path = format!("/api/v1/accounts/{account}/messages");
    let response = http_probe::request(
        cluster.gateway_addr(0),
        "POST",
        &path,
        Some(ADMIN_KEY),
        Some(&body),
    )
    .await
    .expect("publishing");
    assert_eq!(response.status, 202, "{response:?}");
}

/// Proves that a message published through the server API is pushed to the account's
/// devices without a live connection (two offline devices → two pushes, each to its own
/// ntfy topic, with the text and the chat id), not to the device that is connected, not to
/// a device whose token was revoked, and that the pushed device, reconnecting to the other
/// gateway, gets the message itself exactly once by `sync`; `hello.ack` announces ntfy.
#[tokio::test]
async fn offline_devices_are_pushed_and_still_get_the_message_once_by_sync() {
    let ntfy = HttpRecorder::start().await;
    let spec = ClusterSpec::default()
        .gateways(2)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_NTFY_URL", &ntfy.url());
    let cluster = Cluster::start("push-ntfy", spec).await;
    let token = cluster.create_token("wendy");
    let revoked_token = cluster.create_token("wendy");

    let mut phone = cluster.connect(0, "phone").await;
    let hello = json!({ "v": 1, "id": 1, "type": "hello", "payload": { "token": token, "device_id": "phone-1", "ntfy_topic": "wendy-phone" } });
    phone.send(&hello).await;
    let ack = phone.recv_until("hello.ack").await.pop().unwrap();
    assert_eq!(ack["payload"]["server_caps"]["push"], "ntfy", "{ack}");
    let cursor = ack["payload"]["sync_cursor"].as_u64().unwrap();
    phone.close().await;

    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    tablet
        .request(
            "fcm.register",
            None,
            json!({ "ntfy_topic": "wendy-tablet" }),
        )
        .await;
    tablet.recv_until("notification").await;
    tablet.close().await;

    let mut laptop = cluster.connect(0, "laptop").await;
    laptop.pair(&token, "laptop-1").await;
    laptop
        .request(
            "fcm.register",
            None,
            json!({ "ntfy_topic": "wendy-laptop" }),
        )
        .await;
    laptop.recv_until("notification").await;

    let mut old = cluster.connect(1, "old").await;
    old.pair(&revoked_token, "old-1").await;
    old.request("fcm.register", None, json!({ "ntfy_topic": "wendy-old" }))
        .await;
    old.recv_until("notification").await;
    old.close().await;
    cluster.revoke_token(&revoked_token);

    publish(&cluster, "wendy", "Your 7am summary is ready").await;
    laptop.recv_until("message").await;
    let pushes = ntfy.wait_for(2, PUSH_TIMEOUT).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pushes = if pushes.len() == 2 {
        ntfy.requests()
    } else {
        pushes
    };
    let mut topics: Vec<String> = pushes
        .iter()
        .map(|p| p.request_line.trim_start_matches("POST /").to_owned())
        .collect();
    topics.sort();
    assert_eq!(topics, ["wendy-phone", "wendy-tablet"], "{pushes:#?}");
    for push in &pushes {
        assert!(push.body.contains("Your 7am summary is ready"), "{push:?}");
        assert_eq!(
            push.header("x-iris-chat"),
            Some("android:default"),
            "{push:?}"
        );
    }

    let mut phone = cluster.connect(1, "phone-again").await;
    phone.hello_resuming(&token, "phone-1").await;
    let replay = phone.sync(cursor).await;
    let messages: Vec<_> = of_type(&replay, "message")
        .into_iter()
        .filter(|m| payload_str(m, "text") == Some("Your 7am summary is ready"))
        .collect();
    assert_eq!(messages.len(), 1, "{replay:#?}");
}
