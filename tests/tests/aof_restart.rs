//! Redis with `appendonly yes` and `appendfsync always` crashing: every frame a device was
//! sent is still in the outbox after the restart, under the same seq.

use std::time::Duration;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::frames::{payload_u64, seqs_and_types};
use iris_tests::http_probe::wait_for_status;

/// Turns run before the crash.
const TURNS: usize = 3;
/// How long the gateway may take to be ready again after the restart.
const RECOVERY_WITHIN: Duration = Duration::from_secs(20);

/// Proves that after a device received the outboxed frames of several turns, a SIGKILL of
/// Redis and a restart on the same port and data directory, a device that reconnects and
/// syncs from its pairing cursor gets every one of those frames again, with the same seqs
/// and types, and no reset.
#[tokio::test]
async fn an_aof_always_redis_crash_loses_no_acknowledged_frame() {
    let spec = ClusterSpec::default()
        .redis(RedisKind::Durable)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let mut cluster = Cluster::start("aof-restart", spec).await;
    let token = cluster.create_token("amos");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    let paired_at = payload_u64(&ack, "sync_cursor").expect("hello.ack has a cursor");
    let mut received = Vec::new();
    for turn in 0..TURNS {
        phone.send_message(&format!("turn {turn}")).await;
        received.extend(phone.collect_turn().await);
    }
    let sent = seqs_and_types(&received);
    assert!(
        sent.len() >= 4 * TURNS,
        "every turn outboxes four frames: {sent:?}"
    );

    cluster.kill_redis();
    cluster.restart_redis();
    wait_for_status(cluster.gateway_addr(0), "/readyz", 200, RECOVERY_WITHIN).await;

    let mut again = cluster.connect(0, "phone-again").await;
    again.set_recv_timeout(RECOVERY_WITHIN);
    again.hello_resuming(&token, "phone-1").await;
    let replay = again.sync(paired_at).await;
    let done = replay.last().unwrap();
    assert_eq!(done["payload"].get("reset"), None, "no reset: {done}");
    assert_eq!(
        seqs_and_types(&replay),
        sent,
        "the outbox after the crash differs"
    );
}
