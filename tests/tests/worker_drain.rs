//! Graceful drain of a worker: on SIGTERM it finishes its running turn (within its grace),
//! releases every lease and exits; the other worker holds all the partitions within a
//! second of the release. A turn that outlasts the grace is handed over and ends visibly
//! as interrupted.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iris_tests::client::DEFAULT_CHAT;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{worker_node_id, ClusterSpec};
use iris_tests::resp::{self, Reply};
use iris_tests::turn::{assert_interrupted_turn, assert_whole_streamed_turn};

const ACCOUNT: &str = "dora";
const PARTITIONS: u32 = 4;
/// How long the workers may take to share the partitions evenly.
const BALANCE_WAIT: Duration = Duration::from_secs(30);
/// Longest wait for any one frame.
const FRAME_WAIT: Duration = Duration::from_secs(15);
/// How long a draining worker may take to exit (its turn plus the release).
const EXIT_WAIT: Duration = Duration::from_secs(20);
/// The longest the survivor may take to hold every partition after the release.
const HANDOVER_LIMIT: Duration = Duration::from_secs(1);
/// How often the lease watcher looks.
const LEASE_POLL: Duration = Duration::from_millis(5);
/// A text whose echo streams for a few seconds (13 chunks).
/// Like [`LONG_TEXT`], running the echo agent's pretend tool first: a turn whose tool
/// began is never run twice.
const TOOL_TEXT: &str = "!tool a message long enough that its echo streams for a few seconds, \
    chunk after chunk, so the worker is told to stop while the answer is still being written, \
    and has to decide between finishing it and handing it over to the other worker";
const LONG_TEXT: &str = "a message long enough that its echo streams for a few seconds, chunk \
    after chunk, so the worker is told to stop while the answer is still being written, and \
    has to decide between finishing it and handing it over to the other worker";

/// When the drained worker's leases moved, seen from Redis.
struct Handover {
    /// First moment one of its partitions was no longer held by it.
    released: Instant,
    /// First moment the survivor held every partition.
    survivor_holds_all: Instant,
}

/// Polls every partition's lease (from a thread of its own, so it keeps looking while the
/// test reads frames) until `survivor` holds them all.
fn watch_handover(redis_port: u16, leaving: String, survivor: String) -> JoinHandle<Handover> {
    std::thread::spawn(move || {
        let holder = |partition: u32| {
            let lease = iris_shared::keys::lease(partition);
            match resp::command(redis_port, &["GET", &lease]) {
                Ok(Reply::Text(value)) => value.split('|').next().map(str::to_owned),
                _ => None,
            }
        };
        let deadline = Instant::now() + EXIT_WAIT + BALANCE_WAIT;
        let its_own: Vec<u32> = (0..PARTITIONS)
            .filter(|&p| holder(p).as_deref() == Some(&leaving))
            .collect();
        assert!(!its_own.is_empty(), "{leaving} holds no partition");
        let mut released = None;
        loop {
            let now = Instant::now();
            let holders: Vec<Option<String>> = (0..PARTITIONS).map(holder).collect();
            let gave_one_up = its_own
                .iter()
                .any(|&p| holders[p as usize].as_deref() != Some(&leaving));
            if released.is_none() && gave_one_up {
                released = Some(now);
            }
            if holders.iter().all(|h| h.as_deref() == Some(&survivor)) {
                return Handover {
                    released: released.unwrap_or(now),
                    survivor_holds_all: now,
                };
            }
            assert!(
                now < deadline,
                "the survivor never held every partition: {holders:?}"
            );
            std::thread::sleep(LEASE_POLL);
        }
    })
}

async fn wait_for_exit(cluster: &mut Cluster, index: usize) -> Instant {
    let deadline = Instant::now() + EXIT_WAIT;
    while !cluster.worker_exited(index) {
        assert!(
            Instant::now() < deadline,
            "the worker did not exit within {EXIT_WAIT:?} of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Instant::now()
}

/// Proves that a worker sent SIGTERM mid-turn finishes the turn (the device sees it once,
/// whole: one `message.stop` with the full echo and one `agent.idle`), then releases its
/// leases and exits, and that the other worker holds every partition less than a second
/// after the release, although its own periodic lease scan comes only every 5 s (lease
/// TTL 20 s): it is woken by the release. The next message is answered by the survivor.
#[tokio::test]
async fn a_draining_worker_finishes_its_turn_and_the_other_worker_holds_every_partition_within_a_second(
) {
    let spec = ClusterSpec::default()
        .workers(2)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "200")
        .worker_env("IRIS_LEASE_TTL_MS", "20000");
    let mut cluster = Cluster::start("worker-drain", spec).await;
    cluster.wait_for_lease_balance(BALANCE_WAIT).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(FRAME_WAIT);

    let request_id = phone.send_message(LONG_TEXT).await;
    let mut frames = phone.recv_until("message.update").await;
    let owner = cluster.chat_owner(ACCOUNT, DEFAULT_CHAT);
    let survivor = worker_node_id(1 - owner);
    let handover = watch_handover(
        cluster.redis().port(),
        worker_node_id(owner),
        survivor.clone(),
    );
    let terminated = Instant::now();
    cluster.terminate_worker(owner);
    frames.extend(phone.recv_until("agent.idle").await);
    let exited = wait_for_exit(&mut cluster, owner).await;
    let handover = handover.join().expect("the lease watcher panicked");

    assert_whole_streamed_turn("phone", &frames, LONG_TEXT, Some(request_id));
    let moved = handover
        .survivor_holds_all
        .saturating_duration_since(handover.released);
    println!(
        "drain: SIGTERM to exit {:?}; release to survivor holding all {PARTITIONS} partitions {moved:?}",
        exited - terminated
    );
    assert!(
        moved < HANDOVER_LIMIT,
        "the survivor took {moved:?} to hold every partition after the release"
    );
    assert!(
        handover.released > terminated,
        "the leases moved before SIGTERM"
    );

    let again = "who answers now";
    let again_id = phone.send_message(again).await;
    let turn = phone.collect_turn().await;
    assert_whole_streamed_turn("phone", &turn, again, Some(again_id));
}

/// Proves that the drain grace bounds a worker's shutdown: with `IRIS_DRAIN_GRACE_MS=300`
/// a worker sent SIGTERM mid-way through a turn of several seconds exits long before the
/// turn could end, leaving it pending; the turn's tool had begun, so the new owner does not
/// run it again but ends it visibly, exactly once (`error`, `message.stop {interrupted:
/// true}`, `agent.idle`).
#[tokio::test]
async fn a_turn_outlasting_the_drain_grace_is_handed_over_and_ends_interrupted() {
    let spec = ClusterSpec::default()
        .workers(2)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "600")
        .worker_env("IRIS_DRAIN_GRACE_MS", "300");
    let mut cluster = Cluster::start("worker-drain-grace", spec).await;
    cluster.wait_for_lease_balance(BALANCE_WAIT).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(FRAME_WAIT);

    phone.send_message(TOOL_TEXT).await;
    let mut frames = phone.recv_until("message.update").await;
    let owner = cluster.chat_owner(ACCOUNT, DEFAULT_CHAT);
    let terminated = Instant::now();
    cluster.terminate_worker(owner);
    let exited = wait_for_exit(&mut cluster, owner).await;
    frames.extend(phone.recv_until("agent.idle").await);

    let took = exited - terminated;
    println!("drain with 300 ms grace: SIGTERM to exit {took:?}");
    // The turn's tool and 13 chunks at 600 ms need about 9 s; the worker must not wait.
    assert!(
        took < Duration::from_secs(4),
        "the worker took {took:?} to exit"
    );
    assert_interrupted_turn("phone", &frames, TOOL_TEXT);
}
