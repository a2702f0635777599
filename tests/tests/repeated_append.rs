//! A gateway that cannot tell whether its inbound append landed sends it again, so one
//! `message.send` can reach the worker as two entries carrying the same message key: the
//! devices see its message once and one answer, and the chat goes on.

use serde_json::{json, Value};

use iris_shared::clock::now_ms;
use iris_shared::inbound::InboundRequest;
use iris_shared::protocol::DEFAULT_CHAT_ID;
use iris_shared::user_message::new_message_key;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::payload_str;
use iris_tests::inbound_append::enqueue;
use iris_tests::turn::{is_stop_answering, is_user_message, recv_through_answer};

/// Proves that two inbound entries of one `message.send` (same message key, the second
/// read while the first one's turn still streams) show the user's message once and answer
/// it once, and that the message sent after them is answered next.
#[tokio::test]
async fn a_message_appended_twice_under_one_key_is_shown_and_answered_once() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "150");
    let cluster = Cluster::start("repeated-append", spec).await;
    let token = cluster.create_token("rae");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let text = "asked once, appended twice";
    let frame = json!({
        "v": 1, "id": 41, "type": "message.send", "chat_id": DEFAULT_CHAT_ID,
        "payload": { "text": text },
    });
    let received_ms = now_ms();
    let key = new_message_key(received_ms);
    let request = InboundRequest {
        account: "rae".into(),
        device_id: "phone-1".into(),
        chat_id: DEFAULT_CHAT_ID.into(),
        frame_json: frame.to_string(),
        gateway: "gw-test".into(),
        received_ms,
        trace_parent: None,
        user_message_key: Some(key.clone()),
    };
    for _ in 0..2 {
        enqueue(&cluster, &request).await;
    }
    let later = "sent after it";
    phone.send_message(later).await;
    let mut frames = Vec::new();
    recv_through_answer(&mut phone, later, &mut frames).await;

    let shown: Vec<&Value> = frames.iter().filter(|f| is_user_message(f, text)).collect();
    assert_eq!(
        shown.len(),
        1,
        "the message shown {} times: {frames:#?}",
        shown.len()
    );
    let message_id = payload_str(shown[0], "message_id").expect("a user message has an id");
    assert!(
        message_id.ends_with(&key),
        "{message_id} is not named by {key}"
    );
    let answers = frames.iter().filter(|f| is_stop_answering(f, text)).count();
    assert_eq!(answers, 1, "answered {answers} times: {frames:#?}");
    let first_answer = frames.iter().position(|f| is_stop_answering(f, text));
    let later_answer = frames.iter().position(|f| is_stop_answering(f, later));
    assert!(
        first_answer < later_answer,
        "the later message was answered first: {frames:#?}"
    );
}
