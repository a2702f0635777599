//! One seq names one frame, forever, even after a lossy failover: a promoted replica that
//! lacks the tail of an outbox (devices saw seqs it never received) rebases the outbox on
//! its first write, so new frames get seqs above everything devices saw; exactly the
//! devices that saw lost frames are reset, on `sync` and live; every other device replays
//! or continues across the jump. And a partition whose fencing-token counter was lost
//! gets tokens above the chats' fences, so its new owner is not refused.
//!
//! The failover is shown on a plain Redis by rewriting the account's outbox as the
//! promoted replica presents it (`Cluster::lose_outbox_tail`).

use std::time::{Duration, Instant};

use serde_json::Value;

use iris_shared::keys::AccountKeys;
use iris_shared::outbox::REBASE_JUMP;
use iris_shared::partition::partition_of;
use iris_tests::client::{Client, DEFAULT_CHAT};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::frames::{id_of, payload_u64, seq_of, seqs_and_types, type_of};
use iris_tests::http_probe::wait_for_status;
use iris_tests::resp::Reply;
use iris_tests::turn::{assert_whole_streamed_turn, is_user_message};

const ACCOUNT: &str = "rhea";

/// Two gateways (devices sync on the other one) and one instant echo worker.
fn spec() -> ClusterSpec {
    ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
}

/// Runs one turn from `device` and returns its frames.
async fn turn(device: &mut Client, text: &str) -> Vec<Value> {
    let request_id = device.send_message(text).await;
    let frames = device.collect_turn().await;
    assert_whole_streamed_turn("device", &frames, text, Some(request_id));
    frames
}

/// The highest seq among `frames`.
fn last_seq(frames: &[Value]) -> u64 {
    frames
        .iter()
        .filter_map(seq_of)
        .max()
        .expect("outboxed frames")
}

/// Asserts that `answer` is only `sync.done {reset: true}` and returns its cursor.
fn assert_reset(label: &str, answer: &[Value]) -> u64 {
    assert_eq!(
        answer.len(),
        1,
        "[{label}] a reset replays nothing: {answer:#?}"
    );
    assert_eq!(type_of(&answer[0]), "sync.done", "[{label}] {answer:#?}");
    assert_eq!(answer[0]["payload"]["reset"], true, "[{label}] {answer:#?}");
    payload_u64(&answer[0], "cursor").expect("the reset names the head")
}

/// Asserts that `answer` ends with `sync.done` without a reset and returns the replayed
/// frames' `(seq, type)`.
fn assert_replayed(label: &str, answer: &[Value]) -> Vec<(u64, String)> {
    let done = answer.last().expect("sync.done");
    assert_eq!(type_of(done), "sync.done", "[{label}] {answer:#?}");
    assert_eq!(
        done["payload"].get("reset"),
        None,
        "[{label}] no reset: {done}"
    );
    seqs_and_types(&answer[..answer.len() - 1])
}

/// A device of the account paired on gateway 1 after the failover, resuming nowhere yet.
async fn resuming_device(cluster: &Cluster, label: &str) -> Client {
    let token = cluster.create_token(ACCOUNT);
    let mut device = cluster.connect(1, label).await;
    device.hello_resuming(&token, label).await;
    device
}

/// Proves that after a lossy failover that dropped the outbox's last turn (seqs up to
/// `lost_end`, which a device saw): a device syncing with a lost seq before anything was
/// written is reset to the surviving head; a device that paired after the failover and
/// sends a message gets the whole turn live, across the rebase jump, with every seq above
/// `lost_end` and no reset; a device syncing (on the other gateway) from a lost seq gets
/// `sync.done {reset: true}` and nothing else; and devices syncing from before the loss
/// (the surviving head, or before the first turn) replay exactly the frames they lack,
/// with no reset.
#[tokio::test]
async fn a_rebased_outbox_gives_new_frames_seqs_above_the_lost_ones_and_resets_only_devices_that_saw_them(
) {
    let cluster = Cluster::start("outbox-rebase", spec()).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone").await;
    let paired_at = payload_u64(&ack, "sync_cursor").expect("hello.ack has a cursor");
    let kept = turn(&mut phone, "kept").await;
    let kept_end = last_seq(&kept);
    let lost_end = last_seq(&turn(&mut phone, "lost").await);
    phone.close().await;

    cluster.lose_outbox_tail(ACCOUNT, kept_end);

    let mut early = resuming_device(&cluster, "early").await;
    let head = assert_reset("early", &early.sync(lost_end).await);
    assert_eq!(head, kept_end, "reset to the surviving head");

    let mut laptop = resuming_device(&cluster, "laptop").await;
    let answer = laptop.sync(kept_end).await;
    assert_eq!(assert_replayed("laptop", &answer), vec![]);
    let after = turn(&mut laptop, "after the failover").await;
    let after_outboxed = seqs_and_types(&after);
    let first_new = after_outboxed[0].0;
    assert!(
        first_new > lost_end,
        "new seq {first_new} reuses a seq devices saw (up to {lost_end})"
    );
    let early_frames = early.recv_until("agent.idle").await;
    assert_eq!(
        seqs_and_types(&early_frames),
        after_outboxed,
        "the device reset to the surviving head continues live across the jump"
    );

    let mut tablet = resuming_device(&cluster, "tablet").await;
    for cursor in [kept_end + 1, lost_end] {
        let head = assert_reset("tablet", &tablet.sync(cursor).await);
        assert_eq!(head, last_seq(&after));
    }

    let mut desk = resuming_device(&cluster, "desk").await;
    let from_kept = assert_replayed("desk", &desk.sync(kept_end).await);
    assert_eq!(from_kept, after_outboxed, "replay from the surviving head");
    let mut pad = resuming_device(&cluster, "pad").await;
    let from_pairing = assert_replayed("pad", &pad.sync(paired_at).await);
    let expected: Vec<_> = seqs_and_types(&kept)
        .into_iter()
        .chain(after_outboxed)
        .collect();
    assert_eq!(from_pairing, expected, "replay across the jump");
}

/// Proves that a device live across a lossy failover, whose last seq was lost, gets an
/// unsolicited `sync.done {cursor, reset: true}` (no id) as soon as the next frame shows
/// the jump, with a cursor above every seq it saw, and then frames above that cursor only:
/// its next message is answered with a whole streamed turn. The device that wrote across
/// the rebase (paired after the failover) is not reset.
#[tokio::test]
async fn a_live_device_whose_last_seq_was_lost_is_reset_when_the_outbox_is_rebased() {
    let cluster = Cluster::start("outbox-rebase-live", spec()).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone").await;
    let kept_end = last_seq(&turn(&mut phone, "kept").await);
    let lost_end = last_seq(&turn(&mut phone, "lost").await);

    cluster.lose_outbox_tail(ACCOUNT, kept_end);

    let mut laptop = resuming_device(&cluster, "laptop").await;
    laptop.sync(kept_end).await;
    let laptop_turn = turn(&mut laptop, "after the failover").await;
    assert!(
        laptop_turn.iter().all(|f| type_of(f) != "sync.done"),
        "the laptop lost nothing: {laptop_turn:#?}"
    );

    let reset = phone.recv_until("sync.done").await.pop().unwrap();
    assert_eq!(reset["payload"]["reset"], true, "{reset}");
    assert_eq!(id_of(&reset), None, "the reset is unsolicited: {reset}");
    let cursor = payload_u64(&reset, "cursor").expect("the reset names the head");
    assert!(cursor > lost_end, "reset to {cursor}, not above {lost_end}");

    let text = "after the reset";
    let request_id = phone.send_message(text).await;
    let frames = collect_turn_of(&mut phone, text).await;
    assert_whole_streamed_turn("phone", &frames, text, Some(request_id));
    assert!(
        frames.iter().filter_map(seq_of).all(|seq| seq > cursor),
        "frames at or below the reset cursor: {frames:#?}"
    );
}

/// How long the nodes may take to be ready again after Redis restarted.
const RECOVERY_WITHIN: Duration = Duration::from_secs(20);

/// Proves that a real change of server is detected: after Redis crashed and restarted on
/// its own data (`appendfsync always`, so nothing was lost, but a restarted server cannot
/// know that), the next frame's seq jumps at least `REBASE_JUMP` past the old head, and a
/// device syncing from its pairing cursor replays every frame from before and after the
/// restart, across the jump, with no reset: a rebase that lost nothing costs only the jump.
#[tokio::test]
async fn a_restarted_redis_rebases_the_outbox_and_devices_replay_across_the_jump() {
    let spec = ClusterSpec::default()
        .redis(RedisKind::Durable)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let mut cluster = Cluster::start("outbox-rebase-restart", spec).await;
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone").await;
    let paired_at = payload_u64(&ack, "sync_cursor").expect("hello.ack has a cursor");
    let before = turn(&mut phone, "before the restart").await;
    phone.close().await;

    cluster.kill_redis();
    cluster.restart_redis();
    wait_for_status(cluster.gateway_addr(0), "/readyz", 200, RECOVERY_WITHIN).await;
    cluster.wait_workers_serving().await;

    let mut laptop = cluster.connect(0, "laptop").await;
    laptop.set_recv_timeout(RECOVERY_WITHIN);
    laptop.pair(&token, "laptop").await;
    let after = turn(&mut laptop, "after the restart").await;
    let first_new = after.iter().find_map(seq_of).expect("outboxed frames");
    assert!(
        first_new > last_seq(&before) + REBASE_JUMP,
        "seq {first_new} did not jump past the old head {}",
        last_seq(&before)
    );

    let mut desk = cluster.connect(0, "desk").await;
    desk.hello_resuming(&token, "desk").await;
    let replayed = assert_replayed("desk", &desk.sync(paired_at).await);
    let expected: Vec<_> = seqs_and_types(&before)
        .into_iter()
        .chain(seqs_and_types(&after))
        .collect();
    assert_eq!(replayed, expected);
}

/// How long the worker may take to notice its lease is gone and take the partition again.
const RETAKE_WITHIN: Duration = Duration::from_secs(10);

/// Waits until `partition` is leased with a fence other than `old`; returns the new one.
async fn retaken(cluster: &Cluster, partition: u32, old: u64) -> u64 {
    let deadline = Instant::now() + RETAKE_WITHIN;
    loop {
        if let Some((_, fence)) = cluster.lease_of(partition).filter(|(_, f)| *f != old) {
            return fence;
        }
        assert!(
            Instant::now() < deadline,
            "partition {partition} not retaken"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Proves that when the shard of a chat's partition loses the lease and the fencing-token
/// counter (after the partition had changed hands, so the chat's fence is above a first
/// token), the worker that takes the partition again gets a token above the chat's fence,
/// and the chat's next message is answered with a whole streamed turn: the new owner is
/// not refused until the fence expires.
#[tokio::test]
async fn a_partition_whose_fence_counter_was_lost_gets_a_token_above_the_chat_fences() {
    let spec = ClusterSpec::default()
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
        .worker_env("IRIS_LEASE_TTL_MS", "1000");
    let cluster = Cluster::start("fence-counter-lost", spec).await;
    let partition = partition_of(ACCOUNT, DEFAULT_CHAT, cluster.partitions());
    let meta = AccountKeys::new(ACCOUNT).outbox_meta();
    let fence_field = AccountKeys::chat_fence_field(DEFAULT_CHAT);
    let chat_fence = || match cluster.redis_command(&["HGET", &meta, &fence_field]) {
        Ok(Reply::Text(fence)) => fence.parse::<u64>().expect("a fencing token"),
        other => panic!("the chat has no fence: {other:?}"),
    };
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone").await;
    phone.set_recv_timeout(RETAKE_WITHIN);
    turn(&mut phone, "first owner").await;

    // A handover: the partition is taken again with the next token, which the chat's
    // fence records on the next turn.
    let (_, first) = cluster
        .lease_of(partition)
        .expect("the partition is leased");
    cluster
        .redis_command(&["DEL", &iris_shared::keys::lease(partition)])
        .unwrap();
    let second = retaken(&cluster, partition, first).await;
    turn(&mut phone, "second owner").await;
    let fence_before = chat_fence();
    assert_eq!(
        fence_before, second,
        "the chat's fence holds the owner's token"
    );

    cluster.lose_partition_keys(partition);
    let third = retaken(&cluster, partition, second).await;
    assert!(
        third > fence_before,
        "token {third} after the counter was lost is not above the chat's fence {fence_before}"
    );
    turn(&mut phone, "after the counter was lost").await;
    assert_eq!(chat_fence(), third);
}

/// Frames of the turn answering the user's `text`: whatever comes before its user message
/// (the end of an earlier turn) is skipped.
async fn collect_turn_of(device: &mut Client, text: &str) -> Vec<Value> {
    loop {
        let frame = device.recv().await;
        if is_user_message(&frame, text) {
            let mut frames = vec![frame];
            frames.extend(device.collect_turn().await);
            return frames;
        }
    }
}
