//! Channels and threads: created, renamed, made default and deleted from one device, seen
//! by every device, and caught up by a device that was offline.

use serde_json::{json, Value};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, of_type, payload_str, type_of};

fn channel_ids(list: &Value) -> Vec<String> {
    list["payload"]["channels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["chat_id"].as_str().map(str::to_owned))
        .collect()
}

/// Proves the channel lifecycle across two gateways: a channel created on one device
/// appears on the other (a `channel_created` notification, then `channel.created`), a thread
/// hangs under it, a rename and a delete reach both devices, the default channel cannot be
/// deleted, and messages to a deleted chat are refused as not found.
#[tokio::test]
async fn channels_and_threads_live_and_die_on_every_device() {
    let cluster = Cluster::start("channels", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("kate");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    let id = phone
        .request(
            "channel.create",
            None,
            json!({ "name": "Groceries", "kind": "channel" }),
        )
        .await;
    let created = phone.recv_until("channel.created").await.pop().unwrap();
    assert_eq!(id_of(&created), Some(id));
    let channel = payload_str(&created, "chat_id").unwrap().to_owned();
    assert!(channel.starts_with("android:chan_"), "{created}");
    // The answer is the change's last frame: the notification comes before it.
    let mut on_tablet = tablet.recv_until("channel.created").await;
    let created_on_tablet = on_tablet.pop().unwrap();
    assert_eq!(payload_str(&created_on_tablet, "name"), Some("Groceries"));
    let notice = on_tablet.iter().find(|f| type_of(f) == "notification");
    let notice = notice.unwrap_or_else(|| panic!("no notification before: {on_tablet:?}"));
    assert_eq!(payload_str(notice, "kind"), Some("channel_created"));

    tablet
        .request(
            "channel.create",
            Some(&channel),
            json!({ "name": "Weekend", "kind": "thread", "parent_chat_id": channel }),
        )
        .await;
    let thread = tablet.recv_until("channel.created").await.pop().unwrap();
    assert_eq!(
        payload_str(&thread, "parent_chat_id"),
        Some(channel.as_str())
    );
    assert_eq!(payload_str(&thread, "kind"), Some("thread"));
    let thread_id = payload_str(&thread, "chat_id").unwrap().to_owned();
    phone.recv_until("channel.created").await;

    phone
        .request(
            "channel.rename",
            Some(&channel),
            json!({ "name": "Shopping" }),
        )
        .await;
    for client in [&mut phone, &mut tablet] {
        let renamed = client.recv_until("channel.renamed").await.pop().unwrap();
        assert_eq!(payload_str(&renamed, "name"), Some("Shopping"));
    }

    let bad = phone
        .request("channel.rename", Some(&channel), json!({ "name": "  " }))
        .await;
    let error = phone.recv_until("error").await.pop().unwrap();
    assert_eq!(id_of(&error), Some(bad));

    let refused = phone
        .request("channel.delete", Some("android:default"), json!({}))
        .await;
    let error = phone.recv_until("error").await.pop().unwrap();
    assert_eq!(id_of(&error), Some(refused), "{error}");

    let id = tablet
        .request("channel.delete", Some(&channel), json!({}))
        .await;
    let frames = tablet
        .recv_until_match("channel.deleted", |f| id_of(f) == Some(id))
        .await;
    let deleted: Vec<_> = of_type(&frames, "channel.deleted")
        .iter()
        .filter_map(|f| payload_str(f, "chat_id").map(str::to_owned))
        .collect();
    assert!(deleted.contains(&channel), "{frames:#?}");
    let on_phone = phone
        .recv_until_match("channel.deleted", |f| {
            payload_str(f, "chat_id") == Some(channel.as_str())
        })
        .await;
    assert!(!on_phone.is_empty());

    let gone = phone
        .request(
            "message.send",
            Some(&thread_id),
            json!({ "text": "anyone?" }),
        )
        .await;
    let error = phone.recv_until("error").await.pop().unwrap();
    assert_eq!(id_of(&error), Some(gone));
    assert_eq!(payload_str(&error, "code"), Some("not_found"));
}

/// Proves that a device offline while channels change catches up by `sync`: it receives
/// the outboxed `channel.created`/`channel.renamed` frames it missed, in order, and its next
/// pairing lists the channels as they are now.
#[tokio::test]
async fn a_device_offline_during_channel_changes_catches_up_by_sync() {
    let cluster = Cluster::start("channels-sync", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("liam");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    let ack = tablet.pair(&token, "tablet-1").await;
    let cursor = ack["payload"]["sync_cursor"].as_u64().unwrap();
    tablet.close().await;

    phone
        .request(
            "channel.create",
            None,
            json!({ "name": "Travel", "kind": "channel" }),
        )
        .await;
    let created = phone.recv_until("channel.created").await.pop().unwrap();
    let chat = payload_str(&created, "chat_id").unwrap().to_owned();
    phone
        .request("channel.rename", Some(&chat), json!({ "name": "Trips" }))
        .await;
    phone.recv_until("channel.renamed").await;

    let mut tablet = cluster.connect(0, "tablet-again").await;
    let ack = tablet.hello_resuming(&token, "tablet-1").await;
    let replay = tablet.sync(cursor).await;
    let types: Vec<&str> = replay
        .iter()
        .map(type_of)
        .filter(|t| t.starts_with("channel."))
        .collect();
    assert_eq!(types, ["channel.created", "channel.renamed"], "{replay:#?}");
    let listed: Vec<&str> = ack["payload"]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(listed.contains(&"Trips"), "{ack}");
    assert_eq!(channel_ids(&json!({"payload": ack["payload"]})).len(), 2);
}

/// Proves how threads scope frames: a message sent with `chat_id` = the channel and
/// `thread_id` = the thread runs in the thread, its frames carry both ids, and the
/// thread's history holds it while the channel's does not.
#[tokio::test]
async fn a_thread_s_messages_carry_its_thread_id_and_stay_in_its_history() {
    let cluster = Cluster::start("threads", ClusterSpec::default()).await;
    let token = cluster.create_token("otto");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone
        .request(
            "channel.create",
            None,
            json!({ "name": "Work", "kind": "channel" }),
        )
        .await;
    let channel = phone.recv_until("channel.created").await.pop().unwrap();
    let channel = payload_str(&channel, "chat_id").unwrap().to_owned();
    phone
        .request(
            "channel.create",
            Some(&channel),
            json!({ "name": "Launch", "kind": "thread", "parent_chat_id": channel }),
        )
        .await;
    let thread = phone.recv_until("channel.created").await.pop().unwrap();
    let thread = payload_str(&thread, "chat_id").unwrap().to_owned();

    let id = phone.next_request_id();
    phone
        .send(&json!({ "v": 1, "id": id, "type": "message.send", "chat_id": channel, "thread_id": thread, "payload": { "text": "ship it" } }))
        .await;
    let turn = phone.collect_turn().await;
    let start = turn
        .iter()
        .position(|f| payload_str(f, "text") == Some("ship it"))
        .expect("the user's message comes back");
    for frame in &turn[start..] {
        assert_eq!(frame["chat_id"], json!(channel), "{frame}");
        assert_eq!(frame["thread_id"], json!(thread), "{frame}");
    }

    let id = phone.next_request_id();
    phone
        .send(&json!({ "v": 1, "id": id, "type": "history", "chat_id": channel, "thread_id": thread, "payload": {} }))
        .await;
    let in_thread = phone.recv_until("history").await.pop().unwrap();
    assert_eq!(
        in_thread["payload"]["messages"].as_array().unwrap().len(),
        2,
        "{in_thread}"
    );
    phone.request("history", Some(&channel), json!({})).await;
    let in_channel = phone.recv_until("history").await.pop().unwrap();
    assert_eq!(
        in_channel["payload"]["messages"].as_array().unwrap().len(),
        0,
        "{in_channel}"
    );
}
