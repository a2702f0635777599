//! The metrics say what happened: each counter and gauge an operator alerts on is compared
//! with what the devices, the workers and the upstream actually did (connections, frames
//! by type, outbox appends, replays, partition takeovers, failed turns, Redis outages).

use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use iris_tests::cluster::{series_value, Cluster};
use iris_tests::cluster_spec::{worker_node_id, ClusterSpec, RedisKind};
use iris_tests::fake_llm::FakeLlm;
use iris_tests::frames::{payload_str, payload_u64, type_of};

/// How long a series may take to reach its value on a loaded machine.
const SETTLE: Duration = Duration::from_secs(20);

/// Waits until `read` yields a value `accepts` takes; fails with the last value seen.
async fn waits_for<F, Fut>(what: &str, expected: &str, read: F, accepts: impl Fn(i64) -> bool)
where
    F: Fn() -> Fut,
    Fut: Future<Output = i64>,
{
    let deadline = Instant::now() + SETTLE;
    loop {
        let value = read().await;
        if accepts(value) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {value}, expected {expected}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `read` yields `want`.
async fn settles_at<F, Fut>(what: &str, want: i64, read: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = i64>,
{
    waits_for(what, &want.to_string(), read, |value| value == want).await;
}

/// Waits until `read` yields more than `floor`.
async fn grows_past<F, Fut>(what: &str, floor: i64, read: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = i64>,
{
    let expected = format!("more than {floor}");
    waits_for(what, &expected, read, |value| value > floor).await;
}

/// The seqs among `frames`.
fn seqs(frames: &[Value]) -> BTreeSet<u64> {
    frames.iter().filter_map(|f| f["seq"].as_u64()).collect()
}

/// Proves that the gateway's connection and frame counters and the worker's outbox
/// appends equal what three devices did: two paired, one refused for its token (and
/// closed), two pings, one message; the connection gauges follow each close.
#[tokio::test]
async fn connection_frame_and_outbox_counters_equal_what_the_devices_did() {
    let cluster = Cluster::start("metrics-devices", ClusterSpec::default()).await;
    let token = cluster.create_token("carol");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(0, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;
    settles_at("connections of the paired devices", 2, || {
        cluster.gateway_metric(0, "connections")
    })
    .await;
    let mut stranger = cluster.connect(0, "stranger").await;
    stranger.send_hello("not-a-token", "stranger-1").await;
    let refusal = stranger.recv().await;
    assert_eq!(type_of(&refusal), "error", "{refusal}");
    assert!(
        stranger.expect_close().await.is_some(),
        "a bad token closes"
    );
    settles_at("connections after the stranger was refused", 2, || {
        cluster.gateway_metric(0, "connections")
    })
    .await;

    for _ in 0..2 {
        phone.request("ping", None, json!({})).await;
        let pong = phone.recv_until("pong").await;
        assert!(!pong.is_empty());
    }
    phone.send_message("count me").await;
    let phone_frames = phone.collect_turn().await;
    let tablet_frames = tablet.collect_turn().await;

    let page = cluster.gateway_metrics_text(0).await;
    let received = |frame_type: &str| {
        series_value(
            &page,
            &format!("iris_gateway_frames_received_total{{type=\"{frame_type}\"}}"),
        )
    };
    assert_eq!(received("hello"), 3);
    assert_eq!(received("sync"), 2, "each paired device synced once");
    assert_eq!(received("ping"), 2);
    assert_eq!(received("message.send"), 1);
    assert_eq!(series_value(&page, "iris_gateway_auth_failures_total"), 1);
    assert_eq!(
        series_value(&page, "iris_gateway_connections_accepted_total"),
        3
    );
    assert_eq!(series_value(&page, "iris_gateway_paired_devices"), 2);
    assert_eq!(
        series_value(&page, "iris_gateway_requests_forwarded_total"),
        1
    );

    // Every outboxed frame of the turn reached both devices with its seq; the gateway
    // (the user's message) and the worker (the turn) counted exactly those appends.
    let outboxed = seqs(&phone_frames);
    assert_eq!(outboxed, seqs(&tablet_frames));
    assert!(outboxed.len() >= 2, "{phone_frames:#?}");
    settles_at("outbox appends", outboxed.len() as i64, || async {
        let gateway = series_value(
            &cluster.gateway_metrics_text(0).await,
            "iris_gateway_outbox_appends_total",
        );
        gateway + cluster.worker_metric(0, "outbox_appends_total").await
    })
    .await;

    tablet.close().await;
    settles_at("connections after the tablet left", 1, || {
        cluster.gateway_metric(0, "connections")
    })
    .await;
    settles_at("paired devices after the tablet left", 1, || {
        cluster.gateway_metric(0, "paired_devices")
    })
    .await;
}

/// Proves that a sync from where the account began counts as one sync whose replay sent
/// exactly the frames the new device received before `sync.done`.
#[tokio::test]
async fn a_sync_counts_exactly_the_frames_it_replayed() {
    let cluster = Cluster::start("metrics-replay", ClusterSpec::default()).await;
    let token = cluster.create_token("dave");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    let start = payload_u64(&ack, "sync_cursor").expect("sync_cursor");
    for text in ["one", "two", "three"] {
        phone.send_message(text).await;
        phone.collect_turn().await;
    }
    let syncs_before = cluster.gateway_metric(0, "syncs_total").await;
    let replayed_before = cluster.gateway_metric(0, "replayed_frames_total").await;
    let timed_before = cluster.gateway_metric(0, "sync_replay_seconds_count").await;

    let mut laptop = cluster.connect(0, "laptop").await;
    laptop.hello_resuming(&token, "laptop-1").await;
    let frames = laptop.sync(start).await;
    let replayed = frames.len() as i64 - 1; // all but sync.done
    assert!(replayed >= 6, "three turns replayed: {frames:#?}");

    let page = cluster.gateway_metrics_text(0).await;
    assert_eq!(
        series_value(&page, "iris_gateway_syncs_total") - syncs_before,
        1
    );
    assert_eq!(
        series_value(&page, "iris_gateway_replayed_frames_total") - replayed_before,
        replayed
    );
    assert_eq!(
        series_value(&page, "iris_gateway_sync_replay_seconds_count") - timed_before,
        1
    );
}

/// Proves that when a worker is killed, the survivor's takeover counter grows by exactly
/// the partitions the dead worker held, and it then owns all of them.
#[tokio::test]
async fn takeovers_count_the_partitions_a_killed_worker_held() {
    let mut cluster = Cluster::start("metrics-takeover", ClusterSpec::default().workers(2)).await;
    cluster
        .wait_for_lease_balance(Duration::from_secs(30))
        .await;
    let dead = worker_node_id(0);
    let held_by_dead = cluster
        .lease_holders()
        .iter()
        .filter(|holder| holder.as_deref() == Some(dead.as_str()))
        .count() as i64;
    assert_eq!(held_by_dead, 32);
    settles_at("partitions owned, both workers", 64, || async {
        cluster.worker_metric(0, "partitions_owned").await
            + cluster.worker_metric(1, "partitions_owned").await
    })
    .await;
    let takeovers_before = cluster.worker_metric(1, "partition_takeovers_total").await;

    cluster.kill_worker(0);
    settles_at("partitions owned by the survivor", 64, || {
        cluster.worker_metric(1, "partitions_owned")
    })
    .await;
    assert_eq!(
        cluster.worker_metric(1, "partition_takeovers_total").await - takeovers_before,
        held_by_dead
    );
}

/// Proves that turns against an upstream that has gone away count once each as upstream
/// errors and as turns ended in error, and never as finished ones.
#[tokio::test]
async fn an_upstream_that_went_away_counts_each_failed_turn() {
    let llm = FakeLlm::start("metrics-upstream").await;
    let spec = ClusterSpec::default()
        .worker_env("IRIS_AGENT", "openai")
        .worker_env("IRIS_AGENT_URL", &llm.url());
    let cluster = Cluster::start("metrics-upstream", spec).await;
    drop(llm);
    let token = cluster.create_token("erin");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    for text in ["is anyone there", "hello?"] {
        phone.send_message(text).await;
        phone.collect_turn().await;
    }
    settles_at("upstream errors", 2, || {
        cluster.worker_metric(0, "upstream_errors_total")
    })
    .await;
    let page = cluster.worker_metrics_text(0).await;
    assert_eq!(
        series_value(&page, "iris_worker_turns_total{outcome=\"error\"}"),
        2
    );
    assert!(
        !page.contains("iris_worker_turns_total{outcome=\"ok\"} 1"),
        "{page}"
    );
    assert_eq!(
        series_value(&page, "iris_worker_turn_duration_seconds_count"),
        2
    );
}

/// Proves that a Redis outage shows on the gateway as it happened: the `degraded` gauge is 1
/// while Redis is gone and 0 once it is back, `degradations_total` counts the one outage, and
/// `redis_errors_total` counts the failed reads; the worker counts failed commands too.
#[tokio::test]
async fn a_redis_outage_shows_as_one_degraded_spell_and_redis_errors() {
    let spec = ClusterSpec::default().redis(RedisKind::Durable);
    let mut cluster = Cluster::start("metrics-redis-outage", spec).await;
    let token = cluster.create_token("gwen");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    assert_eq!(cluster.gateway_metric(0, "degraded").await, 0);
    assert_eq!(cluster.gateway_metric(0, "degradations_total").await, 0);
    let gateway_errors = cluster.gateway_metric(0, "redis_errors_total").await;

    cluster.kill_redis();
    let status = phone.recv_until("status").await.pop().unwrap();
    assert_eq!(payload_str(&status, "state"), Some("degraded"), "{status}");
    settles_at("degraded while Redis is gone", 1, || {
        cluster.gateway_metric(0, "degraded")
    })
    .await;
    grows_past("gateway Redis errors", gateway_errors, || {
        cluster.gateway_metric(0, "redis_errors_total")
    })
    .await;

    cluster.restart_redis();
    let status = phone.recv_until("status").await.pop().unwrap();
    assert_eq!(payload_str(&status, "state"), Some("online"), "{status}");
    settles_at("degraded once Redis is back", 0, || {
        cluster.gateway_metric(0, "degraded")
    })
    .await;
    assert_eq!(cluster.gateway_metric(0, "degradations_total").await, 1);
    grows_past("worker Redis errors", 0, || {
        cluster.worker_metric(0, "redis_errors_total")
    })
    .await;
}
