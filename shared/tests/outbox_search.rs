//! A finished message's search entry against a private, real `redis-server`: the append
//! script indexes it in the same step as its history entry, so it is found as soon as it
//! is written, once however often the effect is written again, with its ref made from its
//! seq rather than a counter.

mod support;

use support::{command_calls, Redis};

use iris_shared::delivery::RoutedFrame;
use iris_shared::outbox::{append, Append, AppendOutcome, EffectId};
use iris_shared::protocol::{MessagePayload, Role};
use iris_shared::search::{search, IndexedMessage};

const ACCOUNT: &str = "sian";
const CHAT: &str = "android:default";
const NOW_MS: u64 = 1_800_000_000_000;

fn finished(message_id: &str, text: &str, effect: Option<u32>) -> Append {
    let history = MessagePayload {
        message_id: Some(message_id.into()),
        role: Some(Role::Assistant),
        text: Some(text.into()),
        ts: Some(NOW_MS),
        ..Default::default()
    };
    Append {
        frame: RoutedFrame::new(ACCOUNT, None, r#"{"type":"message.stop"}"#),
        chat_id: CHAT.into(),
        fence: None,
        effect: effect.map(|ordinal| EffectId {
            partition: 1,
            entry_id: "5-0".into(),
            ordinal,
        }),
        outboxed: true,
        indexed: Some(IndexedMessage {
            chat_id: CHAT.into(),
            thread_id: None,
            message_id: message_id.into(),
            role: Role::Assistant,
            text: text.into(),
            ts: NOW_MS,
        }),
        history: Some(history),
    }
}

#[tokio::test]
async fn a_finished_message_is_found_once_from_its_append_alone() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let counted = ["incr", "hexists"];

    let before = command_calls(&mut conn, &counted).await;
    let first = append(
        &mut conn,
        &finished("a1", "purple elephants", Some(3)),
        NOW_MS,
    )
    .await
    .unwrap();
    assert!(matches!(first, AppendOutcome::Written { seq: Some(_) }));
    assert_eq!(
        command_calls(&mut conn, &counted).await,
        before,
        "an effect's message needs no id check, and its seq makes its ref"
    );
    let hits = search(&mut conn, ACCOUNT, "elephants", None, 10)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].message_id.as_deref(), Some("a1"));

    // The same effect written again: already written, not indexed again.
    let again = append(
        &mut conn,
        &finished("a1", "purple elephants", Some(3)),
        NOW_MS,
    )
    .await
    .unwrap();
    assert!(matches!(again, AppendOutcome::AlreadyWritten { .. }));
    // A message written as no effect, with an id the chat's index already holds: its
    // history entry is written, its search entry is not.
    append(&mut conn, &finished("a1", "purple elephants", None), NOW_MS)
        .await
        .unwrap();
    let hits = search(&mut conn, ACCOUNT, "purple", None, 10)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "indexed once: {hits:?}");

    append(&mut conn, &finished("a2", "grey elephants", None), NOW_MS)
        .await
        .unwrap();
    let hits = search(&mut conn, ACCOUNT, "elephants", None, 10)
        .await
        .unwrap();
    let mut found: Vec<_> = hits
        .iter()
        .filter_map(|hit| hit.message_id.clone())
        .collect();
    found.sort();
    assert_eq!(found, ["a1", "a2"]);
}
