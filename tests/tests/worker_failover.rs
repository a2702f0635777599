//! Worker crash in the middle of a turn: another worker takes the partition over and the
//! device sees the turn's outboxed effects exactly once.

use std::time::Duration;

use iris_shared::partition::partition_of;
use iris_tests::client::DEFAULT_CHAT;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{worker_node_id, ClusterSpec};
use iris_tests::frames::{id_of, of_type, type_of};
use iris_tests::turn::{is_stop_answering, is_user_message};

const ACCOUNT: &str = "alice";
const PARTITIONS: u32 = 4;
/// Longest wait for any one frame, covering the lease expiry and the replayed turn.
const TAKEOVER_WAIT: Duration = Duration::from_secs(15);

/// Proves that when the worker streaming a reply is killed with SIGKILL right after
/// `message.start`, the surviving worker takes the partition over and the device receives
/// the user's message exactly once, exactly one `message.stop` containing the text, and an
/// `agent.idle`, with seqs strictly increasing and never repeated over the whole
/// connection; and that a later message is answered by the survivor.
#[tokio::test]
async fn a_killed_worker_s_message_is_answered_once_by_another_worker() {
    let spec = ClusterSpec::default()
        .workers(2)
        .partitions(PARTITIONS)
        .worker_env("IRIS_ECHO_DELAY_MS", "300")
        .worker_env("IRIS_LEASE_TTL_MS", "2000");
    let mut cluster = Cluster::start("worker-failover", spec).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TAKEOVER_WAIT);

    let text = "one two three four five six seven eight";
    let request_id = phone.send_message(text).await;
    let mut frames = phone.recv_until("message.start").await;
    let partition = partition_of(ACCOUNT, DEFAULT_CHAT, PARTITIONS);
    let owner = cluster
        .lease_holder(partition)
        .unwrap_or_else(|| panic!("partition {partition} has no lease holder mid-turn"));
    let owner_index = cluster
        .worker_index(&owner)
        .unwrap_or_else(|| panic!("lease holder {owner:?} is not one of the test's workers"));
    cluster.kill_worker(owner_index);
    let survivor = worker_node_id(1 - owner_index);

    frames.extend(phone.recv_until("agent.idle").await);
    let second_text = "are you still there";
    phone.send_message(second_text).await;
    frames.extend(
        phone
            .recv_until_match("message.stop", |f| is_stop_answering(f, second_text))
            .await,
    );
    frames.extend(phone.recv_until("agent.idle").await);

    let user_messages: Vec<_> = frames.iter().filter(|f| is_user_message(f, text)).collect();
    assert_eq!(
        user_messages.len(),
        1,
        "user message not exactly once: {frames:#?}"
    );
    assert_eq!(id_of(user_messages[0]), Some(request_id), "{frames:#?}");
    let stops = frames.iter().filter(|f| is_stop_answering(f, text)).count();
    assert_eq!(stops, 1, "message.stop not exactly once: {frames:#?}");
    assert!(of_type(&frames, "agent.idle").len() >= 2, "{frames:#?}");
    assert!(
        frames
            .iter()
            .any(|f| type_of(f) == "message" && is_user_message(f, second_text)),
        "the second message never came back: {frames:#?}"
    );
    assert_eq!(
        cluster.lease_holder(partition).as_deref(),
        Some(survivor.as_str()),
        "the survivor does not hold the partition"
    );
}
