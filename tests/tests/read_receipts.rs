//! Read receipts: stored per chat, only ever moving forward, broadcast to the account's
//! devices and known to devices that pair later.

use serde_json::{json, Value};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, of_type, payload_str};

fn last_read(list: &Value, chat: &str) -> Option<String> {
    list["channels"]
        .as_array()?
        .iter()
        .find(|c| c["chat_id"] == chat)?
        .get("last_read_message_id")?
        .as_str()
        .map(str::to_owned)
}

/// Proves that a `read.receipt` from one device reaches the other device (a `channel.list`
/// whose channel carries `last_read_message_id`), that an older receipt never moves the
/// marker back, that a receipt for an unknown message is `not_found`, and that a device
/// pairing later learns the marker from `hello.ack`.
#[tokio::test]
async fn read_receipts_fan_out_move_forward_only_and_survive_reconnect() {
    let cluster = Cluster::start("read-receipts", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("nina");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("first").await;
    let first_turn = phone.collect_turn().await;
    phone.send_message("second").await;
    let second_turn = phone.collect_turn().await;
    tablet.collect_turn().await;
    tablet.collect_turn().await;
    let first = payload_str(of_type(&first_turn, "message.stop")[0], "message_id")
        .unwrap()
        .to_owned();
    let second = payload_str(of_type(&second_turn, "message.stop")[0], "message_id")
        .unwrap()
        .to_owned();

    let chat = "android:default";
    let id = phone
        .request(
            "read.receipt",
            None,
            json!({ "chat_id": chat, "message_id": second }),
        )
        .await;
    let answer = phone.recv_until("channel.list").await.pop().unwrap();
    assert_eq!(id_of(&answer), Some(id));
    let broadcast = tablet.recv_until("channel.list").await.pop().unwrap();
    assert_eq!(last_read(&broadcast["payload"], chat), Some(second.clone()));

    phone
        .request(
            "read.receipt",
            None,
            json!({ "chat_id": chat, "message_id": first }),
        )
        .await;
    let after_older = phone.recv_until("channel.list").await.pop().unwrap();
    assert_eq!(
        last_read(&after_older["payload"], chat),
        Some(second.clone()),
        "an older receipt moved the marker back"
    );

    let id = phone
        .request(
            "read.receipt",
            None,
            json!({ "chat_id": chat, "message_id": "nope" }),
        )
        .await;
    let error = phone.recv_until("error").await.pop().unwrap();
    assert_eq!(
        (id_of(&error), payload_str(&error, "code")),
        (Some(id), Some("not_found"))
    );

    let mut laptop = cluster.connect(1, "laptop").await;
    let ack = laptop.pair(&token, "laptop-1").await;
    assert_eq!(last_read(&ack["payload"], chat), Some(second));
}
