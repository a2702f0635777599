//! Backpressure: a device that stops reading does not make its gateway buffer without
//! bound. Its outboxed frames wait in the outbox and its streaming updates are coalesced;
//! if it catches up it gets every outboxed frame live, in order, once; if it stays behind
//! past the slow-consumer bound it is closed with 4104 and recovers everything by `sync`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use iris_tests::client::{Client, Incoming};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{seq_of, type_of};

/// Receive buffer of the slow device's socket.
const SMALL_WINDOW: u32 = 4096;
/// Send queue limit of the gateways under test.
const SEND_QUEUE_BYTES: &str = "65536";

/// A user text of about 12 KB: its echo streams ~500 updates, each the whole text so far,
/// about 3 MB of `message.update` per turn.
fn long_text(turn: usize) -> String {
    format!("turn {turn}: {}", "lorem ipsum ".repeat(1_000))
}

/// What one device received.
#[derive(Default)]
struct Received {
    seqs: Vec<u64>,
    stops: usize,
    updates: usize,
    update_bytes: usize,
}

impl Received {
    fn add(&mut self, frame: &Value) {
        if let Some(seq) = seq_of(frame) {
            self.seqs.push(seq);
        }
        match type_of(frame) {
            "message.stop" => self.stops += 1,
            "message.update" => {
                self.updates += 1;
                self.update_bytes += frame.to_string().len();
            }
            _ => {}
        }
    }
}

/// Sends `turns` long messages from `phone`, reading each whole turn.
async fn flood(phone: &mut Client, turns: usize) -> Received {
    let mut received = Received::default();
    for turn in 0..turns {
        phone.send_message(&long_text(turn)).await;
        for frame in phone.collect_turn().await {
            received.add(&frame);
        }
    }
    received
}

/// Reads everything `device` is sent until it closes or is quiet for `quiet`.
async fn read_all(device: &mut Client, received: &mut Received, quiet: Duration) -> Option<u16> {
    loop {
        match device.next_within(quiet).await {
            Some(Incoming::Frame(frame)) => received.add(&frame),
            Some(Incoming::Binary(_)) => {}
            Some(Incoming::Closed(code)) => return code,
            None => return None,
        }
    }
}

/// Waits until `iris_gateway_<name>` on gateway `index` is at least `at_least`.
async fn wait_for_metric(cluster: &Cluster, index: usize, name: &str, at_least: i64) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let value = cluster.gateway_metric(index, name).await;
        if value >= at_least || Instant::now() > deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Two gateways with a small send queue; `client_timeout_ms` also bounds how long a
/// connection may leave data unacknowledged before the kernel drops it.
fn spec(slow_consumer_ms: &str, client_timeout_ms: &str) -> ClusterSpec {
    ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
        .gateway_env("IRIS_SEND_QUEUE_BYTES", SEND_QUEUE_BYTES)
        .gateway_env("IRIS_SLOW_CONSUMER_MS", slow_consumer_ms)
        .gateway_env("IRIS_CLIENT_TIMEOUT_MS", client_timeout_ms)
}

/// Proves that a device which stops reading while ~36 MB of streamed answers flow is
/// closed with 4104 after the slow-consumer bound, that its gateway's memory meanwhile
/// grows far less than what was streamed, and that reconnecting to the other gateway and
/// syncing from its last seq gives it exactly the outboxed frames it missed: with what it
/// read before the close, every seq the fast device saw, once, and every answer.
#[tokio::test]
async fn a_device_that_stops_reading_is_closed_as_slow_consumer_and_recovers_everything_by_sync() {
    let cluster = Cluster::start("slow-consumer", spec("1500", "300000")).await;
    let token = cluster.create_token("sloane");
    let mut stuck =
        Client::connect_with_small_window(cluster.gateway_addr(0), "stuck", SMALL_WINDOW).await;
    stuck.pair(&token, "stuck-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;
    let rss_before = cluster.gateway_rss_kib(0);

    let turns = 12;
    let fast = flood(&mut phone, turns).await;
    let slow = wait_for_metric(&cluster, 0, "slow_consumers_total", 1).await;
    assert_eq!(slow, 1, "the stuck device counts as one slow consumer");
    let rss_growth_kib = cluster.gateway_rss_kib(0).saturating_sub(rss_before);
    println!(
        "gateway RSS {rss_before} KiB → +{rss_growth_kib} KiB while ~{} MB of updates were sent",
        fast.update_bytes / 1_000_000
    );
    assert!(
        rss_growth_kib < 16 * 1024,
        "the gateway grew by {rss_growth_kib} KiB while the stuck device was sent ~36 MB"
    );
    assert!(
        cluster
            .gateway_metric(0, "frames_left_in_outbox_total")
            .await
            > 0
    );

    let mut before_close = Received::default();
    let code = read_all(&mut stuck, &mut before_close, Duration::from_secs(10)).await;
    assert_eq!(
        code,
        Some(4104),
        "closed as a slow consumer after {} frames (last seq {:?})",
        before_close.seqs.len() + before_close.updates,
        stuck.last_seq()
    );

    let mut again = cluster.connect(1, "stuck-again").await;
    let ack = again.hello(&token, "stuck-1").await;
    let cursor = stuck
        .last_seq()
        .or_else(|| iris_tests::frames::payload_u64(&ack, "sync_cursor"))
        .expect("a cursor to sync from");
    let mut after = Received::default();
    for frame in again.sync(cursor).await {
        after.add(&frame);
    }

    let all: Vec<u64> = before_close
        .seqs
        .iter()
        .chain(&after.seqs)
        .copied()
        .collect();
    let unique: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), unique.len(), "no outboxed frame arrived twice");
    let expected: BTreeSet<u64> = fast.seqs.iter().copied().collect();
    assert_eq!(
        unique, expected,
        "every outboxed frame the phone saw, nothing else"
    );
    assert_eq!(before_close.stops + after.stops, turns, "every answer");
    assert!(
        before_close.updates < fast.updates / 4,
        "the stuck device got {} updates, the phone {}",
        before_close.updates,
        fast.updates
    );
}

/// Proves that a device that stops reading for a while, but less than the slow-consumer
/// bound, stays connected and then receives every outboxed frame live, in seq order and
/// once (the client checks the order), with the streaming updates coalesced, and can go on
/// chatting.
#[tokio::test]
async fn a_device_that_falls_behind_briefly_gets_every_outboxed_frame_with_updates_coalesced() {
    let cluster = Cluster::start("lagging-device", spec("60000", "300000")).await;
    let token = cluster.create_token("lagan");
    let mut lagging =
        Client::connect_with_small_window(cluster.gateway_addr(0), "lagging", SMALL_WINDOW).await;
    lagging.pair(&token, "lagging-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;

    let turns = 6;
    let fast = flood(&mut phone, turns).await;
    let overflows = wait_for_metric(&cluster, 0, "send_queue_overflows_total", 1).await;
    assert!(overflows >= 1, "the lagging device fell behind");

    let mut got = Received::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while got.seqs.last() != fast.seqs.last() && Instant::now() < deadline {
        match lagging.next_within(Duration::from_secs(10)).await {
            Some(Incoming::Frame(frame)) => got.add(&frame),
            Some(Incoming::Binary(_)) => {}
            other => panic!("the lagging device stopped receiving: {other:?}"),
        }
    }
    assert_eq!(got.stops, turns, "every answer arrived live");
    assert_eq!(got.seqs, fast.seqs, "every outboxed frame, in order, once");
    assert!(
        got.updates < fast.updates,
        "updates were coalesced: {} vs {}",
        got.updates,
        fast.updates
    );
    assert_eq!(cluster.gateway_metric(0, "slow_consumers_total").await, 0);
    assert!(cluster.gateway_metric(0, "frames_coalesced_total").await > 0);

    lagging.send_message("still here").await;
    let turn = lagging.collect_turn().await;
    assert!(
        turn.iter().any(|f| type_of(f) == "message.stop"),
        "{turn:#?}"
    );
}

/// Proves that a device which never reads again does not hold its gateway connection
/// forever: once data has gone unacknowledged for the client timeout the connection is
/// dropped (the session cannot run its own timers while its socket is full), and the
/// gateway's connection count goes back down.
#[tokio::test]
async fn a_device_that_never_reads_again_is_dropped_after_the_client_timeout() {
    // Pings every second, so that devices that do read answer well within the timeout.
    let spec = spec("60000", "4000").gateway_env("IRIS_HEARTBEAT_INTERVAL_MS", "1000");
    let cluster = Cluster::start("never-reads", spec).await;
    let token = cluster.create_token("nereus");
    let mut stuck =
        Client::connect_with_small_window(cluster.gateway_addr(0), "stuck", SMALL_WINDOW).await;
    stuck.pair(&token, "stuck-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&token, "phone-1").await;
    assert_eq!(cluster.gateway_metric(0, "connections").await, 1);

    flood(&mut phone, 2).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.gateway_metric(0, "connections").await > 0 && Instant::now() < deadline {
        // The phone keeps its own connection alive on the other gateway.
        phone.request("ping", None, serde_json::json!({})).await;
        phone.recv_until("pong").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(
        cluster.gateway_metric(0, "connections").await,
        0,
        "the stuck connection is gone"
    );
    drop(stuck);
}
