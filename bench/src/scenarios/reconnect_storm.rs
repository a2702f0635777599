//! `reconnect-storm`: every device drops its connection at the same moment and reconnects
//! to ANOTHER gateway, `hello`, then `sync {cursor: last seq it holds}`, while messages
//! keep being published. Measures each device's time from the drop to its `sync.done`
//! (the main latency) and until all are back; then checks every device against its
//! account's outbox in Redis: nothing lost, nothing twice.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::sync::watch;

use crate::bench::{Bench, DRAIN_TIMEOUT};
use crate::client::{Connection, Incoming};
use crate::cluster::Gateway;
use crate::cost_window::CostDelta;
use crate::devices::{device_id, open_devices, Accounts, Device};
use crate::frame_head::FrameHead;
use crate::live_stats::{latency_histogram, LiveStats};
use crate::publisher::publish_paced;
use crate::report::ScenarioResult;

const DEFAULT_CONNECTIONS: usize = 2_000;
const DEFAULT_DEVICES: usize = 2;
const DEFAULT_RATE: f64 = 200.0;
/// Publishing before the drop (at most `--duration`).
const BEFORE_DROP: Duration = Duration::from_secs(2);
/// Publishing after every device is back, so live delivery after a sync is checked too.
const AFTER_RETURN: Duration = Duration::from_secs(1);
/// How long all devices may take to get back.
const RETURN_TIMEOUT: Duration = Duration::from_secs(120);
/// Attempts to reconnect one device before it counts as failed.
const RECONNECT_ATTEMPTS: u32 = 10;

/// What the storm shares with each device.
struct Storm {
    gateways: Vec<Gateway>,
    stats: Arc<LiveStats>,
    dropped: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
    /// When the drop happened (µs on the stats clock).
    drop_us: AtomicU64,
    synced: AtomicU64,
    retries: AtomicU64,
    replayed: AtomicU64,
}

/// One device's story.
struct Outcome {
    account: usize,
    index: usize,
    /// The cursor the reconnected device synced from.
    sync_cursor: Option<u64>,
    initial_cursor: u64,
    seqs: Vec<u64>,
    catch_up_us: Option<u64>,
}

pub async fn run(bench: &Bench) -> Result<ScenarioResult> {
    let options = &bench.options;
    let redis = bench.redis()?;
    let total = options.connections.unwrap_or(DEFAULT_CONNECTIONS).max(1);
    let per_account = options.devices.unwrap_or(DEFAULT_DEVICES).max(1);
    let rate = options.rate.unwrap_or(DEFAULT_RATE).max(0.1);
    let stats = &bench.stats;
    stats.set_phase("tokens");
    let accounts = Accounts::create(bench, "storm", total.div_ceil(per_account)).await?;
    stats.set_phase("opening");
    let devices = open_devices(bench, &accounts, per_account, total, |_, d| d).await;
    let device_count = devices.len() as u64;

    let (drop_now, dropped) = watch::channel(false);
    let (stop_devices, stop) = watch::channel(false);
    let storm = Arc::new(Storm {
        gateways: bench.cluster.gateways.clone(),
        stats: Arc::clone(stats),
        dropped,
        stop,
        drop_us: AtomicU64::new(0),
        synced: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        replayed: AtomicU64::new(0),
    });
    let holdings: Arc<Vec<AtomicU64>> =
        Arc::new(devices.iter().map(|_| AtomicU64::new(0)).collect());
    let first_cursors: Vec<(usize, u64)> = devices.iter().map(|d| (d.account, d.cursor)).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (slot, device) in devices.into_iter().enumerate() {
        let token = accounts.tokens[device.account].clone();
        tasks.spawn(live_through_the_storm(
            device,
            slot,
            token,
            Arc::clone(&storm),
            Arc::clone(&holdings),
        ));
    }

    stats.set_phase("publishing");
    let (stop_publishing, publishing_stopped) = watch::channel(false);
    let before = bench.snapshot().await;
    let load_started = Instant::now();
    let storm_run = async {
        tokio::time::sleep(BEFORE_DROP.min(Duration::from_secs(options.duration))).await;
        let drop_instant = Instant::now();
        storm.drop_us.store(stats.now_us(), Ordering::Relaxed);
        drop_now.send_replace(true);
        stats.set_phase("reconnecting");
        let return_deadline = drop_instant + RETURN_TIMEOUT;
        while storm.synced.load(Ordering::Relaxed) < device_count
            && Instant::now() < return_deadline
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let all_back_s = drop_instant.elapsed().as_secs_f64();
        let after = bench.snapshot().await;
        stats.set_phase("publishing");
        tokio::time::sleep(AFTER_RETURN).await;
        stop_publishing.send_replace(true);
        (drop_instant, all_back_s, after)
    };
    let (tally, (drop_instant, all_back_s, after_return)) = tokio::join!(
        publish_paced(bench, &accounts.names, rate, publishing_stopped),
        storm_run
    );
    let publish_s = load_started.elapsed().as_secs_f64();
    let accepted = tally.accepted.load(Ordering::Relaxed);

    stats.set_phase("verifying");
    let deadline = Instant::now() + DRAIN_TIMEOUT;
    let mut outboxes = Vec::new();
    loop {
        outboxes.clear();
        for name in &accounts.names {
            outboxes.push(redis.outbox_seqs(name).await?);
        }
        let written: usize = outboxes.iter().map(Vec::len).sum();
        if written as u64 >= accepted || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Each device should hold its account's outbox after its first cursor; wait for the
    // last live frames (or the deadline), then collect what each holds.
    let expected_total: u64 = first_cursors
        .iter()
        .map(|&(account, cursor)| {
            outboxes[account]
                .iter()
                .filter(|&&seq| seq > cursor)
                .count() as u64
        })
        .sum();
    let all_holding_deadline = Instant::now() + DRAIN_TIMEOUT;
    let mut all_holding_s = None;
    while Instant::now() < all_holding_deadline {
        let held: u64 = holdings.iter().map(|h| h.load(Ordering::Relaxed)).sum();
        if held >= expected_total {
            all_holding_s = Some(drop_instant.elapsed().as_secs_f64());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop_devices.send_replace(true);
    let mut outcomes = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(outcome) = joined {
            outcomes.push(outcome);
        }
    }

    let mut catch_up = latency_histogram();
    let mut lost = 0u64;
    let mut duplicates = 0u64;
    let mut foreign = 0u64;
    let mut never_back = 0u64;
    let mut frames_held = 0u64;
    for outcome in &outcomes {
        match outcome.catch_up_us {
            Some(us) => catch_up.saturating_record(us.max(1)),
            None => never_back += 1,
        }
        let mut held = outcome.seqs.clone();
        held.sort_unstable();
        let received = held.len();
        held.dedup();
        duplicates += (received - held.len()) as u64;
        frames_held += held.len() as u64;
        let expected: Vec<u64> = outboxes[outcome.account]
            .iter()
            .copied()
            .filter(|&seq| seq > outcome.initial_cursor)
            .collect();
        let missing: Vec<u64> = expected
            .iter()
            .copied()
            .filter(|seq| held.binary_search(seq).is_err())
            .collect();
        if !missing.is_empty() {
            stats.error(format!(
                "account {} device {}: missing seqs {missing:?}; first cursor {}, synced from {:?}, held {held:?}",
                outcome.account, outcome.index, outcome.initial_cursor, outcome.sync_cursor
            ));
        }
        lost += missing.len() as u64;
        foreign += held
            .iter()
            .filter(|seq| expected.binary_search(seq).is_err())
            .count() as u64;
    }
    for (count, what) in [
        (lost, "frames lost"),
        (duplicates, "frames received twice"),
        (foreign, "frames not in the outbox"),
        (never_back, "devices never back"),
    ] {
        if count > 0 {
            stats.error(format!("{count} {what}"));
        }
    }

    let cost = CostDelta::between(&before, &after_return);
    let mut result = ScenarioResult::new("reconnect-storm");
    result.connections = device_count;
    result.frames_per_s = frames_held as f64 / publish_s;
    result.latencies(&catch_up);
    Bench::fill_costs(&mut result, &cost, frames_held);
    result.put(
        "latency_is",
        "drop -> sync.done on the new gateway, per device".into(),
    );
    result.put("all_back_s", all_back_s.into());
    if let Some(s) = all_holding_s {
        result.put("all_holding_everything_s", s.into());
    }
    result.put("accounts", accounts.names.len().into());
    result.put("publish_rate_target", rate.into());
    result.put("published", accepted.into());
    result.put(
        "outbox_frames",
        outboxes.iter().map(Vec::len).sum::<usize>().into(),
    );
    result.put("frames_held", frames_held.into());
    result.put(
        "replayed_in_sync",
        storm.replayed.load(Ordering::Relaxed).into(),
    );
    result.put(
        "reconnect_retries",
        storm.retries.load(Ordering::Relaxed).into(),
    );
    result.put("lost", lost.into());
    result.put("duplicates", duplicates.into());
    result.put("devices_back", (outcomes.len() as u64 - never_back).into());
    bench.fill_errors(&mut result);
    Ok(result)
}

/// One device: holds its connection until the drop, reconnects to the next gateway and
/// syncs from the last seq it holds, then keeps receiving until told to stop.
async fn live_through_the_storm(
    device: Device,
    slot: usize,
    token: String,
    storm: Arc<Storm>,
    holdings: Arc<Vec<AtomicU64>>,
) -> Outcome {
    let stats = &storm.stats;
    let mut seqs = Vec::new();
    let record = |seq: Option<u64>, seqs: &mut Vec<u64>| {
        if let Some(seq) = seq {
            seqs.push(seq);
            holdings[slot].fetch_add(1, Ordering::Relaxed);
        }
    };
    let mut outcome = Outcome {
        account: device.account,
        index: device.index,
        sync_cursor: None,
        initial_cursor: device.cursor,
        seqs: Vec::new(),
        catch_up_us: None,
    };
    let mut connection = device.connection;
    receive_until(
        &mut connection,
        storm.dropped.clone(),
        stats,
        "before the drop",
        |seq| record(seq, &mut seqs),
    )
    .await;
    drop(connection);
    stats.connection_closed();

    let gateway = &storm.gateways[(device.gateway + 1) % storm.gateways.len()];
    let mut connection = None;
    for attempt in 0..RECONNECT_ATTEMPTS {
        if attempt > 0 {
            storm.retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
        }
        let cursor = seqs.iter().copied().max().unwrap_or(device.cursor);
        outcome.sync_cursor = Some(cursor);
        let result = async {
            let mut fresh = Connection::open(gateway, slot).await?;
            fresh.hello(&token, &device_id(device.index)).await?;
            let mut replayed = 0;
            fresh
                .sync(cursor, |head, _| {
                    stats.frames_received(1);
                    replayed += 1;
                    record(head.seq, &mut seqs);
                })
                .await?;
            storm.replayed.fetch_add(replayed, Ordering::Relaxed);
            anyhow::Ok(fresh)
        }
        .await;
        match result {
            Ok(fresh) => {
                connection = Some(fresh);
                break;
            }
            Err(err) if attempt + 1 == RECONNECT_ATTEMPTS => {
                stats.error(format!("reconnect: {err:#}"));
            }
            Err(_) => {}
        }
    }
    let Some(mut connection) = connection else {
        outcome.seqs = seqs;
        return outcome;
    };
    outcome.catch_up_us = Some(
        stats
            .now_us()
            .saturating_sub(storm.drop_us.load(Ordering::Relaxed)),
    );
    storm.synced.fetch_add(1, Ordering::Relaxed);
    stats.connection_opened();

    receive_until(
        &mut connection,
        storm.stop.clone(),
        stats,
        "after the storm",
        |seq| record(seq, &mut seqs),
    )
    .await;
    outcome.seqs = seqs;
    outcome
}

/// Receives live frames on `connection`, handing each one's seq to `record`, until
/// `until` turns true; a close before that counts as an error (`when` says which phase).
async fn receive_until(
    connection: &mut Connection,
    mut until: watch::Receiver<bool>,
    stats: &LiveStats,
    when: &str,
    mut record: impl FnMut(Option<u64>),
) {
    if *until.borrow() {
        return;
    }
    loop {
        tokio::select! {
            _ = until.changed() => break,
            incoming = connection.next() => match incoming {
                Incoming::Text(text) => {
                    stats.frames_received(1);
                    record(FrameHead::parse(&text).and_then(|h| h.seq));
                }
                Incoming::Closed(code) => {
                    stats.error(format!("closed {when} (code {code:?})"));
                    break;
                }
            },
        }
    }
}
