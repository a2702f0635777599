//! Worker crash (SIGKILL) with work in flight: another worker takes the partition over.
//! A turn the dead worker had begun is not re-run (a real model would answer differently):
//! the device sees it end as interrupted, exactly once. A message the dead worker had read
//! but not begun is answered normally by the new owner.

use std::time::{Duration, Instant};

use iris_shared::keys;
use iris_shared::partition::partition_of;
use iris_tests::client::DEFAULT_CHAT;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{worker_node_id, ClusterSpec};
use iris_tests::frames::{id_of, type_of};
use iris_tests::resp::Reply;
use iris_tests::turn::{
    assert_interrupted_turn, assert_whole_streamed_turn, is_interrupted_stop, is_stop_answering,
    is_user_message,
};

const ACCOUNT: &str = "alice";
const PARTITIONS: u32 = 4;
/// Longest wait for any one frame, covering the lease expiry and the takeover.
const TAKEOVER_WAIT: Duration = Duration::from_secs(15);
/// How long the workers may take to share the partitions evenly.
const BALANCE_WAIT: Duration = Duration::from_secs(30);
/// A text whose echo runs the echo agent's pretend tool, then streams for seconds (20
/// chunks at the test's delay): a turn whose tool began is never run twice.
const LONG_TEXT: &str =
    "!tool the first message, long enough that its echo streams for a good few \
    seconds, chunk after chunk after chunk, so that the worker can be killed in the middle of \
    it and the turn is cut off well before it could have finished on its own, whatever the load";

async fn cluster(label: &str) -> Cluster {
    let spec = ClusterSpec::default()
        .workers(2)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "300")
        .worker_env("IRIS_LEASE_TTL_MS", "1000");
    let cluster = Cluster::start(label, spec).await;
    cluster.wait_for_lease_balance(BALANCE_WAIT).await;
    cluster
}

/// Proves that when the worker streaming a reply whose tool began is killed with SIGKILL
/// mid-turn, the surviving worker takes the partition over and, instead of running the
/// turn (and its tool) again, ends it visibly: the device gets the user's message once, then exactly one
/// `error {internal}` about the interruption, one empty `message.stop {interrupted: true}`
/// and one `agent.idle`, with seqs strictly increasing over the whole connection; and that
/// the next message is answered normally by the survivor.
#[tokio::test]
async fn a_turn_whose_tool_began_cut_off_by_a_killed_worker_ends_interrupted_once_and_the_next_message_is_answered(
) {
    let mut cluster = cluster("worker-failover-interrupted").await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TAKEOVER_WAIT);

    let request_id = phone.send_message(LONG_TEXT).await;
    let mut frames = phone.recv_until("message.update").await;
    let owner = cluster.chat_owner(ACCOUNT, DEFAULT_CHAT);
    let survivor = worker_node_id(1 - owner);
    cluster.kill_worker(owner);
    frames.extend(phone.recv_until("agent.idle").await);

    assert_interrupted_turn("phone", &frames, LONG_TEXT);
    let user = frames.iter().find(|f| is_user_message(f, LONG_TEXT));
    assert_eq!(user.and_then(id_of), Some(request_id), "{frames:#?}");
    let partition = partition_of(ACCOUNT, DEFAULT_CHAT, PARTITIONS);
    assert_eq!(
        cluster.lease_holder(partition).as_deref(),
        Some(survivor.as_str()),
        "the survivor does not hold the partition"
    );

    let again = "are you still there";
    let again_id = phone.send_message(again).await;
    let turn = phone.collect_turn().await;
    assert_whole_streamed_turn("phone", &turn, again, Some(again_id));
}

/// Proves that a message the dead worker had already read (it was pending on that worker,
/// queued behind the running turn) but not begun is run normally by the new owner: shown
/// at once when sent, and after the cut-off turn's interrupted ending the device gets that
/// message's whole streamed answer, exactly once.
#[tokio::test]
async fn a_message_read_but_not_begun_by_a_killed_worker_is_answered_normally_by_the_new_owner() {
    let mut cluster = cluster("worker-failover-queued").await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TAKEOVER_WAIT);

    phone.send_message(LONG_TEXT).await;
    let mut frames = phone.recv_until("message.update").await;
    let queued = "and this one waits its turn";
    let queued_id = phone.send_message(queued).await;
    let owner = cluster.chat_owner(ACCOUNT, DEFAULT_CHAT);
    wait_until_pending_on(&cluster, &worker_node_id(owner), 2).await;
    cluster.kill_worker(owner);

    frames.extend(
        phone
            .recv_until_match("message.stop", |f| is_stop_answering(f, queued))
            .await,
    );
    frames.extend(phone.recv_until("agent.idle").await);
    let stop_of_first = frames
        .iter()
        .position(is_interrupted_stop)
        .unwrap_or_else(|| panic!("no interrupted stop: {frames:#?}"));
    let first_idle = stop_of_first
        + frames[stop_of_first..]
            .iter()
            .position(|f| type_of(f) == "agent.idle")
            .unwrap_or_else(|| panic!("no agent.idle after the interrupted stop: {frames:#?}"));
    assert_interrupted_turn("phone", &frames[..=first_idle], LONG_TEXT);
    let echo = frames
        .iter()
        .position(|f| is_user_message(f, queued))
        .unwrap_or_else(|| panic!("the queued message was never shown: {frames:#?}"));
    assert!(
        echo < stop_of_first,
        "the queued message waited for the turn: {frames:#?}"
    );
    let mut turn = vec![frames[echo].clone()];
    turn.extend_from_slice(&frames[first_idle + 1..]);
    assert_whole_streamed_turn("phone", &turn, queued, Some(queued_id));
}

/// Waits until `count` entries of the default chat's partition are pending on `consumer`
/// (it has read them and not acknowledged them).
async fn wait_until_pending_on(cluster: &Cluster, consumer: &str, count: i64) {
    let stream = keys::inbound(partition_of(ACCOUNT, DEFAULT_CHAT, PARTITIONS));
    let deadline = Instant::now() + TAKEOVER_WAIT;
    loop {
        let reply = cluster.redis_command(&[
            "XPENDING",
            &stream,
            keys::WORKER_GROUP,
            "-",
            "+",
            "10",
            consumer,
        ]);
        let pending = match reply {
            Ok(Reply::Array(entries)) => entries.len() as i64,
            _ => 0,
        };
        if pending == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{consumer} never had {count} pending entries (has {pending})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
