//! Bad input from a paired device: each bad frame is answered by an `error` frame with
//! code `unsupported` and the connection stays usable.

use serde_json::json;

use iris_tests::client::Client;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, type_of};

/// Sends `text` and asserts the answer is `error {code: unsupported}` with `expected_id`.
async fn assert_unsupported(phone: &mut Client, text: &str, expected_id: Option<u64>) {
    phone.send_text(text).await;
    let error = phone.recv().await;
    assert_eq!(type_of(&error), "error", "answer to {text}: {error}");
    assert_eq!(
        payload_str(&error, "code"),
        Some("unsupported"),
        "answer to {text}: {error}"
    );
    assert_eq!(id_of(&error), expected_id, "answer to {text}: {error}");
}

/// Proves that malformed JSON, an unknown type (error carries its id) and `v: 2`
/// (error carries its id) each get an `unsupported` error, and a `ping` afterwards still
/// gets its `pong`.
#[tokio::test]
async fn bad_input_gets_error_frames_and_the_connection_survives() {
    let cluster = Cluster::start("bad-input", ClusterSpec::default().workers(0)).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    assert_unsupported(&mut phone, "{this is not json", None).await;
    let unknown = json!({ "v": 1, "id": 7, "type": "no.such.type", "payload": {} });
    assert_unsupported(&mut phone, &unknown.to_string(), Some(7)).await;
    let wrong_version = json!({ "v": 2, "id": 8, "type": "ping", "payload": {} });
    assert_unsupported(&mut phone, &wrong_version.to_string(), Some(8)).await;

    let ping_id = phone.request("ping", None, json!({ "ts": 1 })).await;
    let pong = phone.recv().await;
    assert_eq!(type_of(&pong), "pong", "{pong}");
    assert_eq!(id_of(&pong), Some(ping_id), "{pong}");
}
