//! `fanout`: messages published through the server API at a fixed total rate, spread over
//! the accounts; every device of an account (device d on gateway d % G) receives each one.
//! Measures publish → receipt on each device, frames delivered per second, and the
//! gateways' own delivery latency (worker emit → socket write) from their histograms.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::sync::watch;

use crate::bench::{Bench, DRAIN_TIMEOUT};
use crate::client::{Connection, Incoming};
use crate::cost_window::CostDelta;
use crate::devices::{open_devices, Accounts};
use crate::frame_head::{stamp_in, FrameHead};
use crate::live_stats::LiveStats;
use crate::publisher::publish_paced;
use crate::report::ScenarioResult;

const DEFAULT_ACCOUNTS: usize = 100;
const DEFAULT_DEVICES: usize = 5;
const DEFAULT_RATE: f64 = 1000.0;

pub async fn run(bench: &Bench) -> Result<ScenarioResult> {
    let options = &bench.options;
    let account_count = options.accounts.unwrap_or(DEFAULT_ACCOUNTS).max(1);
    let per_account = options.devices.unwrap_or(DEFAULT_DEVICES).max(1);
    let rate = options.rate.unwrap_or(DEFAULT_RATE).max(0.1);
    let stats = &bench.stats;
    stats.set_phase("tokens");
    let accounts = Accounts::create(bench, "fanout", account_count).await?;
    stats.set_phase("opening");
    let devices = open_devices(
        bench,
        &accounts,
        per_account,
        account_count * per_account,
        |_, d| d,
    )
    .await;
    let opened = devices.len() as u64;
    let delivered = Arc::new(AtomicU64::new(0));
    let (stop, stopped) = watch::channel(false);
    let mut receivers = tokio::task::JoinSet::new();
    for device in devices {
        receivers.spawn(receive(
            device.connection,
            Arc::clone(stats),
            Arc::clone(&delivered),
            stopped.clone(),
        ));
    }

    stats.set_phase("publishing");
    let before = bench.snapshot().await;
    let load_started = Instant::now();
    let (stop_publishing, publishing_stopped) = watch::channel(false);
    let stopper = tokio::spawn({
        let duration = Duration::from_secs(options.duration);
        async move {
            tokio::time::sleep(duration).await;
            stop_publishing.send_replace(true);
        }
    });
    let tally = publish_paced(bench, &accounts.names, rate, publishing_stopped).await;
    stopper.abort();
    let publish_s = load_started.elapsed().as_secs_f64();
    stats.set_phase("draining");
    let accepted = tally.accepted.load(Ordering::Relaxed);
    let expected = accepted * per_account as u64;
    let drain_deadline = Instant::now() + DRAIN_TIMEOUT;
    while delivered.load(Ordering::Relaxed) < expected && Instant::now() < drain_deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let load_s = load_started.elapsed().as_secs_f64();
    let after = bench.snapshot().await;
    stop.send_replace(true);
    while receivers.join_next().await.is_some() {}

    let got = delivered.load(Ordering::Relaxed);
    let cost = CostDelta::between(&before, &after);
    let mut result = ScenarioResult::new("fanout");
    result.connections = opened;
    result.frames_per_s = got as f64 / load_s;
    result.latencies(&stats.latency());
    Bench::fill_costs(&mut result, &cost, got);
    result.put(
        "latency_is",
        "publish request sent -> message on a device".into(),
    );
    result.put("accounts", account_count.into());
    result.put("devices_per_account", per_account.into());
    result.put("publish_rate_target", rate.into());
    result.put("published", accepted.into());
    result.put("publish_rate", (accepted as f64 / publish_s).into());
    result.put("frames_expected", expected.into());
    result.put("frames_received", got.into());
    if let Some(p50) = cost.delivery_latency_ms(0.5) {
        result.put("gateway_delivery_p50_ms", p50.into());
    }
    if let Some(p99) = cost.delivery_latency_ms(0.99) {
        result.put("gateway_delivery_p99_ms", p99.into());
    }
    if let Some(p50) = cost.inbound_lag_ms(0.5) {
        result.put("worker_inbound_lag_p50_ms", p50.into());
    }
    if let Some(p99) = cost.inbound_lag_ms(0.99) {
        result.put("worker_inbound_lag_p99_ms", p99.into());
    }
    if got != expected {
        stats.error(format!("{expected} frames expected, {got} received"));
    }
    bench.fill_errors(&mut result);
    Ok(result)
}

/// One listening device: counts each published `message` and its latency until `stop`.
async fn receive(
    mut connection: Connection,
    stats: Arc<LiveStats>,
    delivered: Arc<AtomicU64>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let incoming = tokio::select! {
            _ = stop.changed() => return,
            incoming = connection.next() => incoming,
        };
        let text = match incoming {
            Incoming::Text(text) => text,
            Incoming::Closed(code) => {
                stats.error(format!("device closed (code {code:?})"));
                return;
            }
        };
        stats.frames_received(1);
        match FrameHead::parse(&text) {
            Some(head) if head.kind == "message" => {
                if let Some(stamp) = stamp_in(&text) {
                    stats.record_latency_us(stats.now_us().saturating_sub(stamp));
                    delivered.fetch_add(1, Ordering::Relaxed);
                }
            }
            Some(head) if head.kind == "error" => stats.error(format!("device got {text}")),
            Some(_) => {}
            None => stats.error("unreadable frame"),
        }
    }
}
