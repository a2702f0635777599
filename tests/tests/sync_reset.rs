//! `sync` with a cursor the outbox cannot serve answers `reset` instead of a partial replay.

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_u64, type_of};

/// Proves that after a turn has filled the outbox, a device syncing from cursor 1 (far
/// older than anything the outbox holds) gets only `sync.done {cursor: head, reset: true}`,
/// where head is the last seq written and the `sync_cursor` its `hello.ack` reported.
#[tokio::test]
async fn sync_with_an_unservable_cursor_answers_reset() {
    let cluster = Cluster::start("sync-reset", ClusterSpec::default()).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.send_message("fill the outbox a little").await;
    phone.collect_turn().await;
    let head = phone.last_seq().expect("the turn wrote outboxed frames");

    let mut stale = cluster.connect(0, "stale-device").await;
    let ack = stale.hello(&token, "stale-1").await;
    assert_eq!(
        payload_u64(&ack, "sync_cursor"),
        Some(head),
        "hello.ack: {ack}"
    );
    let answer = stale.sync(1).await;
    assert_eq!(answer.len(), 1, "a reset replays nothing: {answer:#?}");
    let done = &answer[0];
    assert_eq!(type_of(done), "sync.done", "{done}");
    assert!(
        id_of(done).is_some(),
        "sync.done carries the sync's id: {done}"
    );
    assert_eq!(done["payload"]["reset"], true, "{done}");
    assert_eq!(payload_u64(done, "cursor"), Some(head), "{done}");
}
