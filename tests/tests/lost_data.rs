//! Redis losing the cluster's data (FLUSHALL): live devices get the explicit reset and go
//! on from the new head, reconnecting devices with old cursors get reset on `sync`, and
//! turns work again.

use std::time::Duration;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_u64, seq_of, type_of};
use iris_tests::http_probe;
use iris_tests::turn::assert_whole_streamed_turn;

/// How long the nodes may take to notice the loss and recover.
const NOTICE_WITHIN: Duration = Duration::from_secs(20);
/// Seq bases are per second: the new outbox must start in a later second than the old.
const NEXT_SECOND: Duration = Duration::from_millis(1_100);

/// Proves that after FLUSHALL under a paired device, the device gets an unsolicited
/// `sync.done {cursor: <new head>, reset: true}` (no id) with a head above every seq it had;
/// that its next message is answered with a whole streamed turn whose seqs continue from
/// that head; that `/metrics` counts the epoch change; and that a device reconnecting
/// (with a token created after the flush) and syncing from the old cursor gets
/// `sync.done {reset: true}`.
#[tokio::test]
async fn a_flushed_redis_resets_live_devices_and_turns_go_on() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "0");
    let mut cluster = Cluster::start("lost-data", spec).await;
    let token = cluster.create_token("lena");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(NOTICE_WITHIN);
    phone.send_message("before the flush").await;
    phone.collect_turn().await;
    let old_cursor = phone.last_seq().expect("the turn was outboxed");
    tokio::time::sleep(NEXT_SECOND).await;

    let flushed = cluster.redis().command(&["FLUSHALL"]);
    assert!(flushed.is_ok(), "FLUSHALL: {flushed:?}");
    let reset = phone.recv_until("sync.done").await.pop().unwrap();
    assert_eq!(reset["payload"]["reset"], true, "{reset}");
    assert_eq!(id_of(&reset), None, "the reset is unsolicited: {reset}");
    let head = payload_u64(&reset, "cursor").expect("the reset names the new head");
    assert!(
        head > old_cursor,
        "new head {head} not above old seq {old_cursor}"
    );

    // The worker notices on its own check; a turn it ran before would end interrupted.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !cluster.worker_log(0).contains("an epoch changed")
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cluster.wait_workers_serving().await;

    let text = "after the flush";
    let request_id = phone.send_message(text).await;
    let turn = phone.collect_turn().await;
    assert_whole_streamed_turn("phone", &turn, text, Some(request_id));
    let first_seq = turn.iter().find_map(seq_of).expect("the turn was outboxed");
    assert_eq!(
        first_seq,
        head + 1,
        "seqs continue from the new head: {turn:#?}"
    );

    let metrics = http_probe::get(cluster.gateway_addr(0), "/metrics")
        .await
        .expect("GET /metrics");
    assert!(
        metrics
            .body
            .lines()
            .any(|l| l == "iris_gateway_epoch_changes_total 1"),
        "{}",
        metrics.body
    );

    let new_token = cluster.create_token("lena");
    let mut tablet = cluster.connect(0, "tablet").await;
    tablet.hello_resuming(&new_token, "tablet-1").await;
    let answer = tablet.sync(old_cursor).await;
    assert_eq!(answer.len(), 1, "a reset replays nothing: {answer:#?}");
    assert_eq!(type_of(&answer[0]), "sync.done", "{answer:#?}");
    assert_eq!(answer[0]["payload"]["reset"], true, "{answer:#?}");
}
