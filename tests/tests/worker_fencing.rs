//! Fencing of a paused worker: a worker frozen (SIGSTOP) mid-turn loses its lease, another
//! worker takes the chat over, and when the frozen one wakes up its writes are refused and
//! it stops the chat.

use std::time::{Duration, Instant};

use iris_shared::partition::partition_of;
use iris_tests::client::DEFAULT_CHAT;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{worker_node_id, ClusterSpec};
use iris_tests::frames::type_of;
use iris_tests::turn::{assert_interrupted_turn, assert_whole_streamed_turn};

const ACCOUNT: &str = "frida";
const PARTITIONS: u32 = 4;
/// How long the workers may take to share the partitions evenly.
const BALANCE_WAIT: Duration = Duration::from_secs(30);
/// Longest wait for any one frame, covering the lease expiry and the takeover.
const TAKEOVER_WAIT: Duration = Duration::from_secs(15);
/// How long the woken worker may take to notice it lost the lease.
const NOTICE_WAIT: Duration = Duration::from_secs(15);
/// How long the device keeps listening for stray frames after the woken worker stopped.
const STRAY_WINDOW: Duration = Duration::from_millis(1_500);
/// A text whose echo runs the echo agent's pretend tool, then streams for several seconds
/// (13 chunks at 500 ms): a turn whose tool began ends interrupted on the new owner.
const LONG_TEXT: &str = "!tool a message long enough that its echo streams for several seconds, \
    chunk after chunk, so the worker writing it can be frozen in the middle, lose its lease \
    while frozen, and then wake up still believing it is writing the answer to this message";

/// Proves that a worker paused with SIGSTOP mid-turn, whose lease then expires and whose
/// chat another worker takes over, cannot write once resumed with SIGCONT: the device sees
/// every outboxed frame exactly once with seqs strictly increasing (the client checks every
/// frame), one `message.stop` and one `agent.idle` for the turn (the new owner's interrupted
/// ending), no update after it and no mixed texts; the resumed worker logs that its lease
/// was lost and that it stopped the chat; and the chat then answers normally.
#[tokio::test]
async fn a_paused_worker_resumed_after_takeover_is_fenced_off_and_stops_the_chat() {
    let spec = ClusterSpec::default()
        .workers(2)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "500")
        .worker_env("IRIS_LEASE_TTL_MS", "1000");
    let mut cluster = Cluster::start("worker-fencing", spec).await;
    cluster.wait_for_lease_balance(BALANCE_WAIT).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TAKEOVER_WAIT);

    phone.send_message(LONG_TEXT).await;
    let mut frames = phone.recv_until("message.update").await;
    let partition = partition_of(ACCOUNT, DEFAULT_CHAT, PARTITIONS);
    let owner = cluster.chat_owner(ACCOUNT, DEFAULT_CHAT);
    let survivor = worker_node_id(1 - owner);
    cluster.pause_worker(owner);

    frames.extend(phone.recv_until("agent.idle").await);
    assert_eq!(
        cluster.lease_holder(partition).as_deref(),
        Some(survivor.as_str()),
        "the turn ended but the survivor does not hold the partition"
    );
    cluster.resume_worker(owner);
    wait_for_log(&cluster, owner, "lease lost").await;
    wait_for_log(&cluster, owner, "chat stopped:").await;
    while let Some(stray) = phone.recv_within(STRAY_WINDOW).await {
        frames.push(stray);
    }

    assert_interrupted_turn("phone", &frames, LONG_TEXT);
    let after_idle: Vec<_> = frames
        .iter()
        .skip_while(|f| type_of(f) != "agent.idle")
        .skip(1)
        .collect();
    assert!(
        after_idle.is_empty(),
        "frames after the turn ended (the resumed worker wrote?): {after_idle:#?}"
    );
    let log = cluster.worker_log(owner);
    for line in log
        .lines()
        .filter(|l| l.contains("lease lost") || l.contains("chat stopped:"))
    {
        println!("resumed worker: {line}");
    }
    let stopped = log
        .lines()
        .find(|line| line.contains("chat stopped:"))
        .unwrap_or_default();
    assert!(
        stopped.contains(DEFAULT_CHAT),
        "the stop line does not name the chat: {stopped}"
    );

    cluster.wait_for_lease_balance(BALANCE_WAIT).await;
    let again = "are you there now";
    let again_id = phone.send_message(again).await;
    let turn = phone.collect_turn().await;
    assert_whole_streamed_turn("phone", &turn, again, Some(again_id));
}

/// Waits until worker `index` has logged a line containing `needle`.
async fn wait_for_log(cluster: &Cluster, index: usize, needle: &str) {
    let deadline = Instant::now() + NOTICE_WAIT;
    while !cluster.worker_log(index).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "worker {} never logged {needle:?}",
            worker_node_id(index)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Proves that an entry a former owner read after losing its lease (here a consumer that
/// is not the owner reads it while the owner is frozen, as a paused worker does on waking)
/// is not left pending on it forever: the owner claims it in its sweep and the device gets
/// the whole answer.
#[tokio::test]
async fn a_message_read_by_a_former_owner_is_claimed_and_answered_by_the_owner() {
    let spec = ClusterSpec::default()
        .workers(1)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
        .worker_env("IRIS_LEASE_TTL_MS", "20000");
    let mut cluster = Cluster::start("worker-strays", spec).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TAKEOVER_WAIT);

    cluster.pause_worker(0);
    wait_until_no_blocked_read(&cluster).await;
    let text = "read by the wrong worker";
    let request_id = phone.send_message(text).await;
    let stream = iris_shared::keys::inbound(partition_of(ACCOUNT, DEFAULT_CHAT, PARTITIONS));
    let deadline = Instant::now() + TAKEOVER_WAIT;
    loop {
        let read = cluster.redis().command(&[
            "XREADGROUP",
            "GROUP",
            iris_shared::keys::WORKER_GROUP,
            "worker-former",
            "COUNT",
            "10",
            "STREAMS",
            &stream,
            ">",
        ]);
        if matches!(read, Ok(iris_tests::resp::Reply::Array(ref streams)) if !streams.is_empty()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the message never reached {stream}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cluster.resume_worker(0);

    let turn = phone.collect_turn().await;
    assert_whole_streamed_turn("phone", &turn, text, Some(request_id));
}

/// Waits until no client is blocked in `XREADGROUP` (a frozen worker's last read ended).
async fn wait_until_no_blocked_read(cluster: &Cluster) {
    let deadline = Instant::now() + TAKEOVER_WAIT;
    loop {
        let clients = cluster.redis().command(&["CLIENT", "LIST"]);
        let listing = match &clients {
            Ok(reply) => reply.text().unwrap_or_default().to_owned(),
            Err(_) => String::new(),
        };
        let blocked = listing
            .lines()
            .any(|line| line.contains("cmd=xreadgroup") && line.contains("flags=b "));
        if !blocked && !listing.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "a read stayed blocked: {listing}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
