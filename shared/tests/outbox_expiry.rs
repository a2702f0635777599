//! The outbox append's expiries against a private, real `redis-server`: every key it
//! writes expires, no sooner than the retention after the last write, while the renewal
//! itself runs once per renewal period rather than on every append.

mod support;

use support::{command_calls, Redis};

use redis::aio::MultiplexedConnection;

use iris_shared::delivery::RoutedFrame;
use iris_shared::keys::AccountKeys;
use iris_shared::outbox::{
    append, Append, AppendOutcome, EffectId, EXPIRY_RENEWAL_SECS, OUTBOX_RETENTION_SECS,
    TURN_EFFECTS_TTL_SECS,
};
use iris_shared::protocol::MessagePayload;

const ACCOUNT: &str = "alice";
const CHAT: &str = "android:default";
const START_MS: u64 = 1_800_000_000_000;

fn message(n: u32, ordinal: u32) -> Append {
    Append {
        frame: RoutedFrame::new(ACCOUNT, None, format!(r#"{{"type":"message","n":{n}}}"#)),
        chat_id: CHAT.into(),
        fence: None,
        effect: Some(EffectId {
            partition: 3,
            entry_id: "1-0".into(),
            ordinal,
        }),
        outboxed: true,
        indexed: None,
        history: Some(MessagePayload {
            message_id: Some(format!("m{n}")),
            text: Some("hi".into()),
            ..Default::default()
        }),
    }
}

async fn ttl(conn: &mut MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("TTL").arg(key).query_async(conn).await.unwrap()
}

async fn write(conn: &mut MultiplexedConnection, request: &Append, now_ms: u64) {
    let outcome = append(conn, request, now_ms).await.unwrap();
    assert!(
        matches!(outcome, AppendOutcome::Written { seq: Some(_), .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn every_written_key_expires_no_sooner_than_the_retention_and_renewal_is_once_a_period() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let keys = AccountKeys::new(ACCOUNT);
    let lasting = [keys.outbox(), keys.outbox_meta(), keys.history(CHAT)];
    let retention = OUTBOX_RETENTION_SECS as i64;

    write(&mut conn, &message(1, 0), START_MS).await;
    for key in &lasting {
        assert!(
            ttl(&mut conn, key).await >= retention,
            "{key} after the first write"
        );
    }
    let effects = keys.turn_effects(3, "1-0");
    assert!(ttl(&mut conn, &effects).await > TURN_EFFECTS_TTL_SECS as i64 - 60);

    // Appends within the period renew nothing: no EXPIRE runs for them.
    let before = command_calls(&mut conn, &["expire"]).await;
    for n in 2..12 {
        write(&mut conn, &message(n, n), START_MS + u64::from(n) * 60_000).await;
    }
    assert_eq!(command_calls(&mut conn, &["expire"]).await, before);

    // The key of a deleted chat's history comes back with an expiry on its next message.
    redis::cmd("DEL")
        .arg(keys.history(CHAT))
        .query_async::<()>(&mut conn)
        .await
        .unwrap();
    write(&mut conn, &message(12, 12), START_MS + 3_600_000).await;
    assert!(ttl(&mut conn, &keys.history(CHAT)).await >= retention);

    // Once a period has passed, the next append renews all of them: each still lives at
    // least the retention from that write (the server's clock does not move here, so the
    // TTL left is what the renewal set).
    for key in &lasting {
        redis::cmd("EXPIRE")
            .arg(key)
            .arg(60)
            .query_async::<()>(&mut conn)
            .await
            .unwrap();
    }
    let renewed_at = START_MS + 3_600_000 + EXPIRY_RENEWAL_SECS * 1000 + 1;
    write(&mut conn, &message(13, 13), renewed_at).await;
    for key in &lasting {
        assert!(
            ttl(&mut conn, key).await >= retention,
            "{key} after renewal"
        );
    }
}
