//! Hostile input: the corpus in tests/fixtures/hostile_frames.json (truncated JSON, huge
//! numbers, deep nesting, invalid UTF-8, binary junk, over-long fields, frames before
//! `hello`), each with the answer docs/wire-protocol.md promises; and a device of one
//! account naming another account's chats, threads, messages, media and pickers.

use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use iris_shared::keys::AccountKeys;
use iris_tests::client::{Client, Incoming, DEFAULT_CHAT};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, type_of};

/// How long a device must stay silent to count as having received nothing.
const QUIET: Duration = Duration::from_millis(1500);

/// One way of putting a corpus entry on the wire.
enum Wire {
    /// A text message.
    Text(String),
    /// Bytes sent as a text message without a UTF-8 check.
    RawText(Vec<u8>),
    /// A binary message.
    Binary(Vec<u8>),
}

/// The corpus section `section` (`paired` or `before_hello`).
fn corpus(section: &str) -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hostile_frames.json");
    let text = std::fs::read_to_string(path).expect("reading the hostile frame corpus");
    let corpus: Value = serde_json::from_str(&text).expect("the corpus is JSON");
    corpus[section]
        .as_array()
        .unwrap_or_else(|| panic!("corpus has no {section} list"))
        .clone()
}

fn name_of(entry: &Value) -> &str {
    entry["name"].as_str().unwrap_or("unnamed")
}

fn wire_of(entry: &Value) -> Wire {
    let hex_field = |field: &str| {
        entry[field]
            .as_str()
            .map(|text| hex::decode(text).expect("hex in the corpus"))
    };
    if let Some(bytes) = hex_field("text_hex") {
        return Wire::RawText(bytes);
    }
    if let Some(bytes) = hex_field("binary_hex") {
        return Wire::Binary(bytes);
    }
    let mut text = entry["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no text", name_of(entry)))
        .to_owned();
    if let Some(repeat) = entry["repeat"].as_object() {
        for (placeholder, spec) in repeat {
            let unit = spec[0].as_str().expect("repeat unit");
            let count = spec[1].as_u64().expect("repeat count") as usize;
            text = text.replace(placeholder, &unit.repeat(count));
        }
    }
    Wire::Text(text)
}

async fn send_entry(client: &mut Client, entry: &Value) {
    match wire_of(entry) {
        Wire::Text(text) => client.send_text(&text).await,
        Wire::RawText(bytes) => client.send_unchecked_text(bytes).await,
        Wire::Binary(bytes) => client.send_binary(bytes).await,
    }
}

/// Asserts `answer` is what `entry` expects.
fn assert_expected(entry: &Value, answer: &Value) {
    let name = name_of(entry);
    let expect = &entry["expect"];
    if let Some(type_name) = expect["type"].as_str() {
        assert_eq!(type_of(answer), type_name, "{name}: {answer}");
        assert_eq!(id_of(answer), expect["id"].as_u64(), "{name}: {answer}");
        return;
    }
    assert_eq!(type_of(answer), "error", "{name}: {answer}");
    assert_eq!(
        payload_str(answer, "code"),
        expect["code"].as_str(),
        "{name}: {answer}"
    );
    assert_eq!(id_of(answer), expect["id"].as_u64(), "{name}: {answer}");
    if let Some(piece) = expect["message_contains"].as_str() {
        let message = payload_str(answer, "message").unwrap_or_default();
        assert!(
            message.contains(piece),
            "{name}: {message:?} lacks {piece:?}"
        );
    }
}

fn closes(entry: &Value) -> Option<u16> {
    entry["expect"]["close"].as_u64().map(|code| code as u16)
}

/// Sends every entry of `entries` that keeps the connection open, checking each answer
/// before the next is sent.
async fn send_surviving_entries(client: &mut Client, entries: &[Value]) {
    for entry in entries.iter().filter(|entry| closes(entry).is_none()) {
        send_entry(client, entry).await;
        let answer = client.recv().await;
        assert_expected(entry, &answer);
    }
}

async fn assert_ping_answers(client: &mut Client) {
    let id = client.request("ping", None, json!({ "ts": 7 })).await;
    let pong = client.recv().await;
    assert_eq!((type_of(&pong), id_of(&pong)), ("pong", Some(id)), "{pong}");
}

/// Proves that every hostile frame of the corpus sent by a paired device gets its
/// documented `error` (code, request id, a message naming the field or limit), that the
/// connection survives all of them and still answers `ping`, and that the entries
/// documented to close (invalid UTF-8: 1007, over the size limit: 1009) do so after their
/// error.
#[tokio::test]
async fn hostile_frames_from_a_paired_device_get_their_documented_answer() {
    let cluster = Cluster::start("hostile-frames", ClusterSpec::default().workers(0)).await;
    let token = cluster.create_token("mallory");
    let entries = corpus("paired");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    send_surviving_entries(&mut phone, &entries).await;
    assert_ping_answers(&mut phone).await;

    for entry in entries.iter().filter(|entry| closes(entry).is_some()) {
        let mut closer = cluster.connect(0, name_of(entry)).await;
        closer.pair(&token, "closer").await;
        send_entry(&mut closer, entry).await;
        let answer = closer.recv().await;
        assert_expected(entry, &answer);
        assert_eq!(
            closer.expect_close().await,
            closes(entry),
            "{}",
            name_of(entry)
        );
    }
    // The other connection of the account is unaffected.
    assert_ping_answers(&mut phone).await;
}

/// Proves that frames sent before `hello` get the documented answer (`auth` "send hello
/// first" with the request id for well-formed requests, `unsupported` for frames that
/// cannot be read), that none of them closes the connection, and that a `hello`
/// afterwards still pairs it.
#[tokio::test]
async fn frames_before_hello_get_the_documented_answer_and_hello_still_pairs() {
    let cluster = Cluster::start("before-hello", ClusterSpec::default().workers(0)).await;
    let token = cluster.create_token("nina");
    let mut phone = cluster.connect(0, "phone").await;

    send_surviving_entries(&mut phone, &corpus("before_hello")).await;
    phone.pair(&token, "phone-1").await;
    assert_ping_answers(&mut phone).await;
}

/// Uploads three bytes as `media_ref`; returns the media id of the `media.offer`.
async fn upload_media(client: &mut Client, media_ref: &str) -> String {
    let bytes = b"abc";
    let start = json!({
        "media_ref": media_ref, "kind": "image", "mime": "image/png",
        "size": bytes.len(), "filename": "a.png",
    });
    client.request("media.upload.start", None, start).await;
    let mut chunk = vec![0x01, media_ref.len() as u8];
    chunk.extend_from_slice(media_ref.as_bytes());
    chunk.extend_from_slice(bytes);
    client.send_binary(chunk).await;
    let sha256 = hex::encode(Sha256::digest(bytes));
    let end = json!({ "media_ref": media_ref, "sha256": sha256 });
    let id = client.request("media.upload.end", None, end).await;
    let offer = client
        .recv_until_match("media.offer", |frame| id_of(frame) == Some(id))
        .await
        .pop()
        .unwrap();
    payload_str(&offer, "media_id").unwrap().to_owned()
}

/// Waits until `client` has been silent for [`QUIET`].
async fn wait_until_quiet(client: &mut Client) {
    while client.next_within(QUIET).await.is_some() {}
}

/// Account A's state as Redis holds it: outbox head and length, channels.
fn account_state(cluster: &Cluster, account: &str) -> Vec<String> {
    let keys = AccountKeys::new(account);
    let redis = cluster.redis();
    [
        vec!["HGETALL".to_owned(), keys.outbox_meta()],
        vec!["XLEN".to_owned(), keys.outbox()],
        vec!["HGETALL".to_owned(), keys.channels()],
        vec!["HGETALL".to_owned(), keys.reads()],
    ]
    .iter()
    .map(|command| {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        format!("{:?}", redis.command(&args))
    })
    .collect()
}

/// How many hits `client`'s search for `query` finds (the index may lag a turn slightly).
async fn search_hits(client: &mut Client, query: &str) -> usize {
    for _ in 0..50 {
        let id = client
            .request("search", None, json!({ "query": query }))
            .await;
        let results = client
            .recv_until_match("search.results", |frame| id_of(frame) == Some(id))
            .await
            .pop()
            .unwrap();
        let hits = results["payload"]["hits"].as_array().map_or(0, Vec::len);
        if hits > 0 {
            return hits;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    0
}

/// A's history of `chat_id`, as A's device gets it.
async fn history_of(client: &mut Client, chat_id: &str) -> Value {
    let id = client.request("history", Some(chat_id), json!({})).await;
    let page = client
        .recv_until_match("history", |frame| id_of(frame) == Some(id))
        .await
        .pop()
        .unwrap();
    page["payload"]["messages"].clone()
}

/// Proves that a device of account B naming account A's chat ids (channel, thread,
/// thread under channel), message ids (history anchor, read receipt), media id (pull and
/// attach) and picker id gets `error {code: not_found}` with its request id each time,
/// that searching A's words finds nothing, and that afterwards A is untouched: A's device
/// received no frame during the attack (which also replays the whole hostile corpus from
/// B), A's outbox head and length, channels, read markers and history are unchanged, and
/// B's connection still answers `ping`.
#[tokio::test]
async fn another_accounts_ids_are_not_found_and_leave_that_account_untouched() {
    let cluster = Cluster::start("cross-account", ClusterSpec::default()).await;
    let token_a = cluster.create_token("alice");
    let token_b = cluster.create_token("bob");
    let mut alice = cluster.connect(0, "alice").await;
    alice.pair(&token_a, "alice-phone").await;

    alice
        .request(
            "channel.create",
            None,
            json!({ "name": "Secret", "kind": "channel" }),
        )
        .await;
    let created = alice.recv_until("channel.created").await.pop().unwrap();
    let channel = payload_str(&created, "chat_id").unwrap().to_owned();
    let thread_request = json!({ "name": "Plans", "kind": "thread", "parent_chat_id": channel });
    alice
        .request("channel.create", Some(&channel), thread_request)
        .await;
    let created = alice.recv_until("channel.created").await.pop().unwrap();
    let thread = payload_str(&created, "chat_id").unwrap().to_owned();
    alice.send_message("zanzibar treasure coordinates").await;
    alice.collect_turn().await;
    let media_id = upload_media(&mut alice, "alice-photo").await;
    alice.send_message("/model").await;
    let picker = alice.recv_until("picker.model").await.pop().unwrap();
    let picker_id = payload_str(&picker, "picker_id").unwrap().to_owned();
    wait_until_quiet(&mut alice).await;
    assert!(
        search_hits(&mut alice, "zanzibar").await > 0,
        "alice's own search must find her message"
    );
    let history_before = history_of(&mut alice, DEFAULT_CHAT).await;
    let message_id = history_before[0]["message_id"].as_str().unwrap().to_owned();
    let state_before = account_state(&cluster, "alice");

    let mut bob = cluster.connect(0, "bob").await;
    bob.pair(&token_b, "bob-phone").await;
    let attacks: Vec<(&str, Option<&str>, Option<&str>, Value)> = vec![
        (
            "message.send",
            Some(&channel),
            None,
            json!({ "text": "hi" }),
        ),
        ("message.send", Some(&thread), None, json!({ "text": "hi" })),
        (
            "message.send",
            Some(&channel),
            Some(&thread),
            json!({ "text": "hi" }),
        ),
        ("agent.stop", Some(&channel), None, json!({})),
        ("history", Some(&channel), None, json!({})),
        ("history", Some(&channel), Some(&thread), json!({})),
        (
            "history",
            Some(DEFAULT_CHAT),
            None,
            json!({ "before_message_id": message_id }),
        ),
        (
            "read.receipt",
            None,
            None,
            json!({ "chat_id": channel, "message_id": message_id }),
        ),
        (
            "read.receipt",
            None,
            None,
            json!({ "chat_id": DEFAULT_CHAT, "message_id": message_id }),
        ),
        (
            "channel.rename",
            Some(&channel),
            None,
            json!({ "name": "Mine now" }),
        ),
        ("channel.delete", Some(&channel), None, json!({})),
        ("channel.delete", Some(&thread), None, json!({})),
        ("channel.set_default", Some(&channel), None, json!({})),
        (
            "channel.create",
            None,
            None,
            json!({ "name": "Sub", "kind": "thread", "parent_chat_id": channel }),
        ),
        (
            "search",
            None,
            None,
            json!({ "query": "zanzibar", "scope": "chat", "chat_id": channel }),
        ),
        ("media.pull", None, None, json!({ "media_id": media_id })),
        (
            "message.send",
            Some(DEFAULT_CHAT),
            None,
            json!({ "text": "look", "media_refs": [media_id] }),
        ),
        (
            "picker.select",
            None,
            None,
            json!({ "picker_id": picker_id, "value": "x" }),
        ),
        (
            "picker.select",
            Some(DEFAULT_CHAT),
            None,
            json!({ "picker_id": picker_id, "value": "x" }),
        ),
    ];
    for (type_name, chat_id, thread_id, payload) in attacks {
        let id = bob.next_request_id();
        let mut frame = json!({ "v": 1, "id": id, "type": type_name, "payload": payload });
        if let Some(chat_id) = chat_id {
            frame["chat_id"] = json!(chat_id);
        }
        if let Some(thread_id) = thread_id {
            frame["thread_id"] = json!(thread_id);
        }
        bob.send(&frame).await;
        let answer = bob.recv().await;
        assert_eq!(type_of(&answer), "error", "{frame}: {answer}");
        assert_eq!(
            payload_str(&answer, "code"),
            Some("not_found"),
            "{frame}: {answer}"
        );
        assert_eq!(id_of(&answer), Some(id), "{frame}: {answer}");
    }
    let id = bob
        .request("search", None, json!({ "query": "zanzibar" }))
        .await;
    let results = bob.recv().await;
    assert_eq!(
        (type_of(&results), id_of(&results)),
        ("search.results", Some(id)),
        "{results}"
    );
    let hits = results["payload"]["hits"].as_array().map_or(0, Vec::len);
    assert_eq!(hits, 0, "bob found alice's words: {results}");
    send_surviving_entries(&mut bob, &corpus("paired")).await;
    assert_ping_answers(&mut bob).await;

    match alice.next_within(QUIET).await {
        None => {}
        Some(Incoming::Frame(frame)) => panic!("alice received a frame during the attack: {frame}"),
        Some(other) => panic!("alice's connection saw {other:?} during the attack"),
    }
    assert_eq!(account_state(&cluster, "alice"), state_before);
    assert_eq!(history_of(&mut alice, DEFAULT_CHAT).await, history_before);
    assert_ping_answers(&mut alice).await;
}
