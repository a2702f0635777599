//! `replay`: while an account's device is away, `--frames` messages (default 10,000) are
//! published to it and written to its outbox; the device then reconnects (to another
//! gateway) and `sync`s from its old cursor. Measures `sync` sent → `sync.done` with every
//! frame received in order, each once; `--repeats` times, a fresh account each time.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::bench::Bench;
use crate::client::Connection;
use crate::cost_window::{CostDelta, CostSnapshot};
use crate::devices::{device_id, open_devices, Accounts};
use crate::live_stats::latency_histogram;
use crate::publisher::publish_burst;
use crate::report::ScenarioResult;

/// How long the worker may take to write a batch into the outbox.
const WRITE_TIMEOUT: Duration = Duration::from_secs(120);

pub async fn run(bench: &Bench) -> Result<ScenarioResult> {
    let options = &bench.options;
    let redis = bench.redis()?;
    let frames = options.frames.max(1);
    let repeats = options.repeats.max(1);
    let stats = &bench.stats;
    stats.set_phase("tokens");
    let accounts = Accounts::create(bench, "replay", repeats).await?;
    let mut sync_times = latency_histogram();
    let mut windows: Vec<(CostSnapshot, CostSnapshot)> = Vec::new();
    let mut replayed_total = 0u64;
    let mut sync_seconds = 0.0;
    let mut publish_rates = Vec::new();
    for (round, account) in accounts.names.iter().enumerate() {
        stats.set_phase("pairing");
        let single = Accounts {
            names: vec![account.clone()],
            tokens: vec![accounts.tokens[round].clone()],
        };
        let Some(device) = open_devices(bench, &single, 1, 1, |_, _| 0).await.pop() else {
            continue;
        };
        let cursor = device.cursor;
        device.connection.close().await;
        stats.connection_closed();

        stats.set_phase("publishing");
        let publish_started = Instant::now();
        let accepted = publish_burst(bench, account, frames).await;
        let deadline = Instant::now() + WRITE_TIMEOUT;
        while redis.outbox_len(account).await? < accepted && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        publish_rates.push(accepted as f64 / publish_started.elapsed().as_secs_f64());
        let expected: Vec<u64> = redis
            .outbox_seqs(account)
            .await?
            .into_iter()
            .filter(|&seq| seq > cursor)
            .collect();
        if (expected.len() as u64) < accepted {
            stats.error(format!(
                "round {round}: {accepted} published, {} in the outbox",
                expected.len()
            ));
        }

        stats.set_phase("replaying");
        let gateway = &bench.cluster.gateways[1 % bench.cluster.gateways.len()];
        let mut connection = Connection::open(gateway, round).await?;
        connection.hello(&single.tokens[0], &device_id(0)).await?;
        let before = bench.snapshot().await;
        let mut received = Vec::with_capacity(expected.len());
        let sync_started = Instant::now();
        let done = connection
            .sync(cursor, |head, _| {
                if let Some(seq) = head.seq {
                    received.push(seq);
                }
            })
            .await?;
        let elapsed = sync_started.elapsed();
        let after = bench.snapshot().await;
        windows.push((before, after));
        connection.close().await;
        stats.frames_received(received.len() as u64);
        sync_times.saturating_record(elapsed.as_micros() as u64);
        stats.record_latency_us(elapsed.as_micros() as u64);
        sync_seconds += elapsed.as_secs_f64();
        replayed_total += received.len() as u64;
        if done.reset {
            stats.error(format!("round {round}: sync answered with reset"));
        }
        if received != expected {
            let in_order = received.windows(2).all(|w| w[0] < w[1]);
            stats.error(format!(
                "round {round}: {} frames expected, {} received (in order: {in_order})",
                expected.len(),
                received.len()
            ));
        }
    }

    let mut result = ScenarioResult::new("replay");
    result.connections = 1;
    result.frames_per_s = replayed_total as f64 / sync_seconds.max(1e-6);
    result.latencies(&sync_times);
    let cost = sum_windows(&windows);
    if let Some(cost) = &cost {
        Bench::fill_costs(&mut result, cost, replayed_total);
    }
    result.put(
        "latency_is",
        "sync sent -> sync.done with every frame".into(),
    );
    result.put("frames_per_round", frames.into());
    result.put("rounds", repeats.into());
    result.put("frames_replayed", replayed_total.into());
    result.put("target_ms", 100.0.into());
    if !publish_rates.is_empty() {
        let mean = publish_rates.iter().sum::<f64>() / publish_rates.len() as f64;
        result.put("publish_rate", mean.into());
    }
    bench.fill_errors(&mut result);
    Ok(result)
}

/// The costs of several windows added up (CPU, Redis commands, time).
fn sum_windows(windows: &[(CostSnapshot, CostSnapshot)]) -> Option<CostDelta> {
    let mut deltas = windows.iter().map(|(b, a)| CostDelta::between(b, a));
    let mut total = deltas.next()?;
    for delta in deltas {
        total.add(&delta);
    }
    Some(total)
}
