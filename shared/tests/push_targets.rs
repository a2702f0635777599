//! Integration tests of the push helpers (targets, jobs stream, sent
//! markers) against a private, real `redis-server`.

mod support;

use support::Redis;

use redis::aio::MultiplexedConnection;
use std::collections::{HashMap, HashSet};

use iris_shared::keys::{self, AccountKeys};
use iris_shared::push::{
    claim_send, enqueue, remove_target, set_target, targets, PushJob, PushKind, PushTarget,
};
use redis::streams::StreamRangeReply;

const ACCOUNT: &str = "alice";

fn target(fcm: Option<&str>, ntfy: Option<&str>) -> PushTarget {
    PushTarget {
        fcm_token: fcm.map(str::to_owned),
        ntfy_topic: ntfy.map(str::to_owned),
    }
}

async fn stored(conn: &mut MultiplexedConnection) -> HashMap<String, PushTarget> {
    targets(conn, ACCOUNT).await.unwrap()
}

#[test]
fn push_keys_carry_the_account_hash_tag() {
    let keys = AccountKeys::new(ACCOUNT);
    for key in [
        keys.push_targets(),
        keys.presence(),
        keys.pushed("phone-1", 42),
    ] {
        assert!(key.starts_with("iris:{a:alice}:"), "{key}");
    }
    assert_eq!(keys.push_targets(), "iris:{a:alice}:push");
    assert_eq!(keys.presence(), "iris:{a:alice}:presence");
    assert_eq!(
        keys.pushed("phone-1", 42),
        "iris:{a:alice}:pushed:phone-1:42"
    );
    assert_eq!(keys::push_jobs(), "iris:push:jobs");
}

#[tokio::test]
async fn targets_merge_field_by_field() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    assert!(stored(&mut conn).await.is_empty());

    set_target(&mut conn, ACCOUNT, "phone", &target(Some("fcm-1"), None))
        .await
        .unwrap();
    set_target(&mut conn, ACCOUNT, "phone", &target(None, Some("topic-1")))
        .await
        .unwrap();
    set_target(&mut conn, ACCOUNT, "tablet", &target(None, Some("topic-2")))
        .await
        .unwrap();
    assert_eq!(
        stored(&mut conn).await,
        HashMap::from([
            ("phone".to_owned(), target(Some("fcm-1"), Some("topic-1"))),
            ("tablet".to_owned(), target(None, Some("topic-2"))),
        ])
    );

    // A new token replaces the old one and leaves the topic alone.
    set_target(&mut conn, ACCOUNT, "phone", &target(Some("fcm-2"), None))
        .await
        .unwrap();
    assert_eq!(
        stored(&mut conn).await["phone"],
        target(Some("fcm-2"), Some("topic-1"))
    );

    // Stored as JSON with only the fields present.
    let json: String = redis::cmd("HGET")
        .arg(AccountKeys::new(ACCOUNT).push_targets())
        .arg("tablet")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json).unwrap(),
        serde_json::json!({"ntfy_topic": "topic-2"})
    );
}

#[tokio::test]
async fn empty_fields_clear_and_an_emptied_target_disappears() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    set_target(
        &mut conn,
        ACCOUNT,
        "phone",
        &target(Some("fcm"), Some("topic")),
    )
    .await
    .unwrap();

    set_target(&mut conn, ACCOUNT, "phone", &target(Some(""), None))
        .await
        .unwrap();
    assert_eq!(
        stored(&mut conn).await["phone"],
        target(None, Some("topic"))
    );

    set_target(&mut conn, ACCOUNT, "phone", &target(None, Some("")))
        .await
        .unwrap();
    assert!(stored(&mut conn).await.is_empty());
    let exists: bool = redis::cmd("HEXISTS")
        .arg(AccountKeys::new(ACCOUNT).push_targets())
        .arg("phone")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!exists, "an emptied target is removed, not stored as {{}}");

    // Clearing what was never set stores nothing either.
    set_target(&mut conn, ACCOUNT, "watch", &target(Some(""), Some("")))
        .await
        .unwrap();
    set_target(&mut conn, ACCOUNT, "watch", &PushTarget::default())
        .await
        .unwrap();
    assert!(stored(&mut conn).await.is_empty());
}

#[tokio::test]
async fn remove_forgets_one_device_only() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    set_target(&mut conn, ACCOUNT, "phone", &target(Some("a"), None))
        .await
        .unwrap();
    set_target(&mut conn, ACCOUNT, "tablet", &target(Some("b"), None))
        .await
        .unwrap();
    remove_target(&mut conn, ACCOUNT, "phone").await.unwrap();
    remove_target(&mut conn, ACCOUNT, "never-seen")
        .await
        .unwrap();
    assert_eq!(
        stored(&mut conn).await,
        HashMap::from([("tablet".to_owned(), target(Some("b"), None))])
    );
    // Other accounts are untouched by all of this.
    assert!(targets(&mut conn, "bob").await.unwrap().is_empty());
}

#[tokio::test]
async fn unreadable_stored_targets_are_skipped() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let key = AccountKeys::new(ACCOUNT).push_targets();
    let _: () = redis::cmd("HSET")
        .arg(&key)
        .arg("broken")
        .arg("not json")
        .arg("empty")
        .arg("{}")
        .query_async(&mut conn)
        .await
        .unwrap();
    set_target(&mut conn, ACCOUNT, "phone", &target(Some("a"), None))
        .await
        .unwrap();
    assert_eq!(
        stored(&mut conn).await.into_keys().collect::<HashSet<_>>(),
        HashSet::from(["phone".to_owned()])
    );
    // A broken entry is replaced by the next update rather than blocking it.
    set_target(&mut conn, ACCOUNT, "broken", &target(None, Some("t")))
        .await
        .unwrap();
    assert_eq!(stored(&mut conn).await["broken"], target(None, Some("t")));
}

#[tokio::test]
async fn enqueued_jobs_read_back_from_the_stream() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let job = PushJob {
        account: ACCOUNT.to_owned(),
        chat_id: "android:default".to_owned(),
        seq: 1_234_567,
        kind: PushKind::Picker,
        title: "Approval needed".to_owned(),
        body: "Run `rm -rf build`?".to_owned(),
    };
    enqueue(&mut conn, &job).await.unwrap();
    let long = PushJob {
        seq: 1_234_568,
        kind: PushKind::Message,
        body: "x".repeat(5_000),
        ..job.clone()
    };
    enqueue(&mut conn, &long).await.unwrap();

    let reply: StreamRangeReply = redis::cmd("XRANGE")
        .arg(keys::push_jobs())
        .arg("-")
        .arg("+")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(reply.ids.len(), 2);
    assert_eq!(PushJob::from_entry(&reply.ids[0]), Some(job));
    let read = PushJob::from_entry(&reply.ids[1]).unwrap();
    assert_eq!(read.seq, long.seq);
    assert_eq!(read.kind, PushKind::Message);
    assert_eq!(
        read.body.chars().count(),
        iris_shared::push::job::BODY_MAX_CHARS
    );
    assert!(read.body.ends_with('…'));
}

#[tokio::test]
async fn a_push_is_claimed_once_per_device_and_seq() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    assert!(claim_send(&mut conn, ACCOUNT, "phone", 7).await.unwrap());
    assert!(!claim_send(&mut conn, ACCOUNT, "phone", 7).await.unwrap());
    assert!(claim_send(&mut conn, ACCOUNT, "tablet", 7).await.unwrap());
    assert!(claim_send(&mut conn, ACCOUNT, "phone", 8).await.unwrap());
    let ttl: i64 = redis::cmd("TTL")
        .arg(AccountKeys::new(ACCOUNT).pushed("phone", 7))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= iris_shared::push::PUSHED_TTL_SECS as i64);
}
