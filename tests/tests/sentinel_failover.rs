//! A Sentinel-managed Redis failing over under a live cluster: every node follows the new
//! master, turns keep being answered, and nothing acknowledged before is lost.

use std::time::{Duration, Instant};

use iris_shared::keys::AccountKeys;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::frames::{payload_u64, seqs_and_types};
use iris_tests::resp::{self, Reply};
use iris_tests::turn::assert_whole_streamed_turn;

/// Turns after the failover.
const TURNS_AFTER: usize = 3;
/// How long any one frame may take while the nodes move to the new master.
const FOLLOW_WITHIN: Duration = Duration::from_secs(30);

/// Proves that with `IRIS_REDIS_URL=redis+sentinel://…/mymaster`, after a turn is answered
/// and replicated (`WAIT 1`), a `SENTINEL FAILOVER` that promotes the replica leaves the
/// device connected, the gateway subscribes on the new master, every turn sent afterwards
/// gets its whole streamed answer, and a device syncing from the first device's pairing
/// cursor gets every outboxed frame the first device received (before and after the
/// failover) with the same seqs, no reset.
#[tokio::test]
async fn after_a_sentinel_failover_every_node_follows_the_new_master() {
    let spec = ClusterSpec::default()
        .redis(RedisKind::Sentinel)
        .partitions(8)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("sentinel-failover", spec).await;
    let token = cluster.create_token("sam");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    let paired_at = payload_u64(&ack, "sync_cursor").expect("hello.ack has a cursor");
    phone.set_recv_timeout(FOLLOW_WITHIN);
    phone.send_message("before the failover").await;
    let mut received = phone.collect_turn().await;
    let replicated = cluster.redis().command(&["WAIT", "1", "5000"]);
    assert_eq!(
        replicated.ok(),
        Some(Reply::Integer(1)),
        "the replica acknowledged"
    );

    let group = cluster.sentinels().expect("a Sentinel cluster");
    let old_master = group.master().port();
    let new_master = group.failover();
    assert_ne!(old_master, new_master);
    // Live-only frames (`message.update`) are not kept: those published on the new master
    // before the gateway subscribed there are not seen (the outboxed ones are caught up).
    // The gateway follows within the Sentinels' naming of the new master.
    let channel = AccountKeys::new("sam").live();
    let followed_by = Instant::now() + FOLLOW_WITHIN;
    loop {
        let listeners = resp::command(new_master, &["PUBSUB", "NUMSUB", &channel]).unwrap();
        if matches!(&listeners, Reply::Array(reply) if reply.get(1) == Some(&Reply::Integer(1))) {
            break;
        }
        assert!(
            Instant::now() < followed_by,
            "the gateway never subscribed on the new master"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    for turn in 0..TURNS_AFTER {
        let text = format!("after the failover {turn}");
        let request_id = phone.send_message(&text).await;
        let frames = phone.collect_turn().await;
        assert_whole_streamed_turn("phone", &frames, &text, Some(request_id));
        received.extend(frames);
    }

    let mut tablet = cluster.connect(0, "tablet").await;
    tablet.set_recv_timeout(FOLLOW_WITHIN);
    tablet.hello_resuming(&token, "tablet-1").await;
    let replay = tablet.sync(paired_at).await;
    let done = replay.last().unwrap();
    assert_eq!(done["payload"].get("reset"), None, "no reset: {done}");
    assert_eq!(seqs_and_types(&replay), seqs_and_types(&received));
}
