//! Requests of one device take effect in the order sent, also when they were pipelined
//! behind `hello` and `sync` and are served together afterwards.

use serde_json::json;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{of_type, payload_str};

/// Messages pipelined in one burst right behind `hello`.
const BURST: usize = 6;

/// Proves that `hello`, `sync` and several `message.send` written back to back without
/// waiting are answered in order: the user messages come back in the order sent, and their
/// turns run in that order.
#[tokio::test]
async fn pipelined_requests_behind_hello_and_sync_keep_their_order() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("request-order", spec).await;
    let token = cluster.create_token("rosa");
    let mut phone = cluster.connect(0, "phone").await;

    phone.send_hello(&token, "phone-1").await;
    phone.request("sync", None, json!({ "cursor": 0 })).await;
    for n in 0..BURST {
        phone.send_message(&format!("burst message {n}")).await;
    }
    let mut frames = Vec::new();
    for _ in 0..BURST {
        frames.extend(phone.collect_turn().await);
    }
    let user_texts: Vec<&str> = of_type(&frames, "message")
        .into_iter()
        .filter(|f| payload_str(f, "role") == Some("user"))
        .filter_map(|f| payload_str(f, "text"))
        .collect();
    let expected: Vec<String> = (0..BURST).map(|n| format!("burst message {n}")).collect();
    assert_eq!(user_texts, expected);
}
