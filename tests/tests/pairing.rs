//! Pairing: a created token pairs a device (and the connection then answers `ping`);
//! a bad or revoked token is refused with an `auth` error and close code 4001.

use serde_json::json;

use iris_tests::client::DEFAULT_CHAT;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, payload_u64, type_of};

/// Close code of a refused token.
const AUTH_FAILED: u16 = 4001;

/// Proves that `hello` with a token from `iris-gateway token create` is answered by a
/// `hello.ack` carrying the hello's id, an integer `sync_cursor` and the default channel,
/// and that `ping` is then answered by a `pong` with the ping's id and timestamp.
#[tokio::test]
async fn pairing_accepts_a_created_token_and_answers_ping() {
    let cluster = Cluster::start("pairing-accepts", ClusterSpec::default().workers(0)).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;

    let ack = phone.hello(&token, "phone-1").await;
    assert!(
        payload_u64(&ack, "sync_cursor").is_some(),
        "no integer sync_cursor: {ack}"
    );
    let channels = ack["payload"]["channels"]
        .as_array()
        .expect("channels array");
    assert!(
        channels
            .iter()
            .any(|channel| channel["chat_id"] == DEFAULT_CHAT),
        "no {DEFAULT_CHAT} channel: {ack}"
    );

    let ping_id = phone.request("ping", None, json!({ "ts": 1234 })).await;
    let pong = phone.recv().await;
    assert_eq!(type_of(&pong), "pong", "{pong}");
    assert_eq!(id_of(&pong), Some(ping_id), "{pong}");
    assert_eq!(payload_u64(&pong, "ts"), Some(1234), "{pong}");
}

/// Proves that `hello` with a token the cluster never issued is answered by an `error`
/// with code `auth` (carrying the hello's id) and the socket is closed with code 4001.
#[tokio::test]
async fn pairing_rejects_a_bad_token_with_auth_error_and_close_4001() {
    let cluster = Cluster::start("pairing-bad-token", ClusterSpec::default().workers(0)).await;
    let mut phone = cluster.connect(0, "phone").await;

    let hello_id = phone.send_hello("not-a-real-token", "phone-1").await;
    let error = phone.recv().await;
    assert_eq!(type_of(&error), "error", "{error}");
    assert_eq!(payload_str(&error, "code"), Some("auth"), "{error}");
    assert_eq!(id_of(&error), Some(hello_id), "{error}");
    assert_eq!(phone.expect_close().await, Some(AUTH_FAILED));
}

/// Proves that a token that paired once is refused after `iris-gateway token revoke`:
/// `error {code: auth}` then close code 4001.
#[tokio::test]
async fn pairing_rejects_a_revoked_token_with_auth_error_and_close_4001() {
    let cluster = Cluster::start("pairing-revoked", ClusterSpec::default().workers(0)).await;
    let token = cluster.create_token("alice");
    let mut before = cluster.connect(0, "before-revoke").await;
    before.hello(&token, "phone-1").await;
    before.close().await;

    cluster.revoke_token(&token);
    let mut after = cluster.connect(0, "after-revoke").await;
    after.send_hello(&token, "phone-1").await;
    let error = after.recv().await;
    assert_eq!(type_of(&error), "error", "{error}");
    assert_eq!(payload_str(&error, "code"), Some("auth"), "{error}");
    assert_eq!(after.expect_close().await, Some(AUTH_FAILED));
}
