//! `idle`: N paired connections on one gateway, held for `--hold` seconds. Measures the
//! gateway's resident memory per connection (RSS before and after opening them), the time
//! to open and pair each one, and what holding them costs (heartbeats: idle CPU).

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::bench::Bench;
use crate::client::Incoming;
use crate::devices::{open_devices, Accounts};
use crate::live_stats::latency_histogram;
use crate::report::ScenarioResult;

/// Default connections: just under the 20,000 open files one process may have here.
const DEFAULT_CONNECTIONS: usize = 19_000;
const DEFAULT_DEVICES: usize = 2;

pub async fn run(bench: &Bench) -> Result<ScenarioResult> {
    let options = &bench.options;
    let connections = options.connections.unwrap_or(DEFAULT_CONNECTIONS);
    let per_account = options.devices.unwrap_or(DEFAULT_DEVICES).max(1);
    let stats = &bench.stats;
    stats.set_phase("tokens");
    let accounts = Accounts::create(bench, "idle", connections.div_ceil(per_account)).await?;
    stats.set_phase("opening");
    let before_open = bench.snapshot().await;
    let open_started = Instant::now();
    let devices = open_devices(bench, &accounts, per_account, connections, |_, _| 0).await;
    let open_s = open_started.elapsed().as_secs_f64();
    // Let the allocator and the registry settle before reading memory.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after_open = bench.snapshot().await;
    let opened = devices.len() as u64;

    let mut pair_times = latency_histogram();
    for device in &devices {
        pair_times.saturating_record(device.pair_us.max(1));
    }
    stats.set_phase("holding");
    let mut readers = tokio::task::JoinSet::new();
    for mut device in devices {
        let stats = std::sync::Arc::clone(stats);
        readers.spawn(async move {
            loop {
                match device.connection.next().await {
                    Incoming::Text(_) => stats.frames_received(1),
                    Incoming::Closed(code) => {
                        stats.error(format!("idle connection closed (code {code:?})"));
                        stats.connection_closed();
                        return;
                    }
                }
            }
        });
    }
    let frames_before = stats.frames.load(std::sync::atomic::Ordering::Relaxed);
    let hold_start = bench.snapshot().await;
    tokio::time::sleep(Duration::from_secs(options.hold)).await;
    let hold_end = bench.snapshot().await;
    let hold_frames = stats.frames.load(std::sync::atomic::Ordering::Relaxed) - frames_before;
    stats.set_phase("closing");
    readers.shutdown().await;

    let opening = crate::cost_window::CostDelta::between(&before_open, &after_open);
    let holding = crate::cost_window::CostDelta::between(&hold_start, &hold_end);
    let mut result = ScenarioResult::new("idle");
    result.connections = opened;
    result.frames_per_s = hold_frames as f64 / holding.seconds;
    result.latencies(&pair_times);
    if opened > 0 {
        result.rss_per_conn_kb = Some(opening.gateway_rss_bytes / 1024.0 / opened as f64);
    }
    Bench::fill_costs(&mut result, &holding, hold_frames);
    result.put("latency_is", "connect + hello + sync per connection".into());
    result.put("requested_connections", connections.into());
    result.put("accounts", accounts.names.len().into());
    result.put("open_s", open_s.into());
    result.put("opened_per_s", (opened as f64 / open_s.max(1e-6)).into());
    result.put("open_gateway_cpu_s", opening.gateway_cpu_s.into());
    result.put(
        "gateway_rss_delta_mb",
        (opening.gateway_rss_bytes / 1048576.0).into(),
    );
    result.put("hold_s", holding.seconds.into());
    result.put(
        "idle_cpu_percent_of_a_core",
        (100.0 * holding.cpu_s() / holding.seconds).into(),
    );
    bench.fill_errors(&mut result);
    if opened < connections as u64 && result.errors == 0 {
        result.errors = connections as u64 - opened;
    }
    Ok(result)
}
