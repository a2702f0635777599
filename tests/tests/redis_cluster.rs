//! What only a Redis Cluster can do to Iris: one shard losing its data while the others
//! keep theirs. (Every other flow runs on a Cluster too: `IRIS_TEST_REDIS=cluster`.)

use std::time::Duration;

use iris_shared::keys::AccountKeys;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::frames::{id_of, payload_u64, seq_of, type_of};
use iris_tests::turn::assert_whole_streamed_turn;

/// How long the nodes may take to notice the loss.
const NOTICE_WITHIN: Duration = Duration::from_secs(20);

/// Proves that when one shard of a Redis Cluster loses its data (FLUSHALL on its master,
/// which its replica follows), exactly the devices of accounts on that shard get the
/// explicit reset (`sync.done {reset: true}`, no id): a device of an account on another
/// shard keeps its cursor, and its next turn's seqs continue right after its last one,
/// with no reset before them. Both accounts' turns work afterwards.
#[tokio::test]
async fn a_shard_that_loses_its_data_resets_only_the_accounts_on_it() {
    let spec = ClusterSpec::default()
        .redis(RedisKind::Cluster)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let mut cluster = Cluster::start("cluster-shard-loss", spec).await;
    let redis = cluster.redis_cluster().expect("a Redis Cluster");
    let master_of =
        |account: &str| redis.master_of_slot(redis.slot_of(&AccountKeys::new(account).outbox()));
    let lost = "lena";
    let lost_master = master_of(lost);
    let kept = (0..100)
        .map(|n| format!("kai{n}"))
        .find(|account| master_of(account) != lost_master)
        .expect("an account on another shard");

    let mut phones = Vec::new();
    for account in [lost, kept.as_str()] {
        let token = cluster.create_token(account);
        let mut phone = cluster.connect(0, account).await;
        phone.pair(&token, &format!("{account}-phone")).await;
        phone.set_recv_timeout(NOTICE_WITHIN);
        phone.send_message("before the loss").await;
        phone.collect_turn().await;
        phones.push(phone);
    }
    let kept_cursor = phones[1].last_seq().expect("the turn was outboxed");
    // Seq bases are per second: a recreated outbox must start in a later second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;

    let flushed = iris_tests::resp::command(lost_master, &["FLUSHALL"]);
    assert!(flushed.is_ok(), "FLUSHALL on {lost_master}: {flushed:?}");
    let reset = phones[0].recv_until("sync.done").await.pop().unwrap();
    assert_eq!(reset["payload"]["reset"], true, "{reset}");
    assert_eq!(id_of(&reset), None, "the reset is unsolicited: {reset}");

    let deadline = std::time::Instant::now() + NOTICE_WITHIN;
    while !cluster.worker_log(0).contains("an epoch changed")
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cluster.wait_workers_serving().await;

    // The other account's device: its next turn follows its last seq, no reset first.
    let text = "after the other shard's loss";
    let request_id = phones[1].send_message(text).await;
    let turn = phones[1].collect_turn().await;
    assert!(
        turn.iter().all(|frame| type_of(frame) != "sync.done"),
        "a device on a shard that kept its data was reset: {turn:?}"
    );
    assert_whole_streamed_turn(&kept, &turn, text, Some(request_id));
    let first_seq = turn.iter().find_map(seq_of).expect("outboxed frames");
    assert_eq!(
        first_seq,
        kept_cursor + 1,
        "the kept account's seqs did not continue"
    );

    let head = payload_u64(&reset, "cursor").expect("the reset names the new head");
    let text = "after the loss";
    let request_id = phones[0].send_message(text).await;
    let turn = phones[0].collect_turn().await;
    assert_whole_streamed_turn(lost, &turn, text, Some(request_id));
    let first_seq = turn.iter().find_map(seq_of).expect("outboxed frames");
    assert!(
        first_seq > head,
        "seq {first_seq} not after the reset's head {head}"
    );
}
