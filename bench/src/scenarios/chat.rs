//! `chat`: accounts × devices spread over the gateways (device d on gateway d % G); each
//! account's device 0 sends `message.send` at `--rate` per second; every other device
//! measures send → first `message.update` (the main latency), send → `message.start` (the
//! turn has begun) and send → `message.stop` of each turn, and counts that every turn it should see ended. With a slow agent
//! (`--agent-delay-ms`) messages arrive while turns run: each device also measures send →
//! the user's message shown, separately for messages sent while the chat's agent was busy
//! (an earlier message still unanswered) and while it was idle.
//!
//! `busy` is the same run shaped like a busy day: many accounts (200) and a slow agent
//! (turns of 1.5 s or more, so every account sends while its agent works); its main latency is
//! send → the user's message shown on the other device, which must never wait behind the
//! agent.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use hdrhistogram::Histogram;
use tokio::sync::watch;

use crate::bench::{Bench, DRAIN_TIMEOUT};
use crate::client::{Connection, Incoming};
use crate::cost_window::CostDelta;
use crate::devices::{open_devices, Accounts};
use crate::frame_head::{stamp_in, stamped_text, FrameHead};
use crate::live_stats::{latency_histogram, LiveStats};
use crate::options::ScenarioName;
use crate::report::{quantiles_ms, ScenarioResult};

const DEFAULT_ACCOUNTS: usize = 50;
const BUSY_ACCOUNTS: usize = 200;
const DEFAULT_DEVICES: usize = 2;
const DEFAULT_RATE_PER_ACCOUNT: f64 = 1.0;

/// Which of the two runs: `chat` (latency to the first update) or `busy` (latency to the
/// user's message shown, with many accounts and a slow agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Chat,
    Busy,
}

pub async fn run(bench: &Bench, shape: Shape) -> Result<ScenarioResult> {
    let options = &bench.options;
    let (name, default_accounts, scenario) = match shape {
        Shape::Chat => ("chat", DEFAULT_ACCOUNTS, ScenarioName::Chat),
        Shape::Busy => ("busy", BUSY_ACCOUNTS, ScenarioName::Busy),
    };
    let account_count = options.accounts.unwrap_or(default_accounts).max(1);
    let per_account = options.devices.unwrap_or(DEFAULT_DEVICES).max(2);
    let rate = options.rate.unwrap_or(DEFAULT_RATE_PER_ACCOUNT).max(0.01);
    let stats = &bench.stats;
    stats.set_phase("tokens");
    let accounts = Accounts::create(bench, name, account_count).await?;
    stats.set_phase("opening");
    let total = account_count * per_account;
    let devices = open_devices(bench, &accounts, per_account, total, |_, d| d).await;
    let opened = devices.len() as u64;

    let sent: Arc<Vec<AtomicU64>> =
        Arc::new((0..account_count).map(|_| AtomicU64::new(0)).collect());
    let (stop_sending, sending_stopped) = watch::channel(false);
    let (stop_all, all_stopped) = watch::channel(false);
    let mut senders = tokio::task::JoinSet::new();
    let mut receivers = tokio::task::JoinSet::new();
    let period = Duration::from_secs_f64(1.0 / rate);
    for device in devices {
        let stats = Arc::clone(stats);
        let sent = Arc::clone(&sent);
        if device.index == 0 {
            let phase = period.mul_f64(device.account as f64 / account_count as f64);
            let stop = sending_stopped.clone();
            let done = all_stopped.clone();
            senders.spawn(send_turns(
                device.connection,
                device.account,
                period,
                phase,
                sent,
                stats,
                stop,
                done,
            ));
        } else {
            let stop = sending_stopped.clone();
            receivers.spawn(watch_turns(
                device.connection,
                device.account,
                sent,
                stats,
                stop,
            ));
        }
    }
    stats.set_phase("load");
    let before = bench.snapshot().await;
    tokio::time::sleep(Duration::from_secs(options.duration)).await;
    stop_sending.send_replace(true);
    stats.set_phase("draining");
    let mut stop_latency = latency_histogram();
    let mut started = latency_histogram();
    let mut shown_busy = latency_histogram();
    let mut shown_idle = latency_histogram();
    let mut turn_length = latency_histogram();
    let mut turns_seen = 0;
    while let Some(joined) = receivers.join_next().await {
        if let Ok(seen) = joined {
            turns_seen += seen.turns;
            stop_latency.add(&seen.stop).ok();
            started.add(&seen.started).ok();
            shown_busy.add(&seen.shown_busy).ok();
            shown_idle.add(&seen.shown_idle).ok();
            turn_length.add(&seen.turn_length).ok();
        }
    }
    let after = bench.snapshot().await;
    stop_all.send_replace(true);
    while senders.join_next().await.is_some() {}

    let cost = CostDelta::between(&before, &after);
    let turns_sent: u64 = sent.iter().map(|n| n.load(Ordering::Relaxed)).sum();
    let frames = stats.frames.load(Ordering::Relaxed);
    let mut result = ScenarioResult::new(name);
    result.connections = opened;
    result.frames_per_s = frames as f64 / cost.seconds;
    let mut shown = shown_busy.clone();
    shown.add(&shown_idle).ok();
    match shape {
        Shape::Chat => {
            result.latencies(&stats.latency());
            result.put(
                "latency_is",
                "message.send -> first message.update on another device".into(),
            );
        }
        Shape::Busy => {
            result.latencies(&shown);
            result.put(
                "latency_is",
                "message.send -> the user's message on another device while the agent works".into(),
            );
            let (p50, p99, _) = quantiles_ms(&stats.latency());
            result.put("update_p50_ms", p50.into());
            result.put("update_p99_ms", p99.into());
        }
    }
    Bench::fill_costs(&mut result, &cost, frames);
    let (p50, p99, p999) = quantiles_ms(&stop_latency);
    result.put("stop_p50_ms", p50.into());
    result.put("stop_p99_ms", p99.into());
    result.put("stop_p999_ms", p999.into());
    let (p50, p99, _) = quantiles_ms(&started);
    result.put("started_p50_ms", p50.into());
    result.put("started_p99_ms", p99.into());
    for (name, histogram) in [("shown_busy", &shown_busy), ("shown_idle", &shown_idle)] {
        let (p50, p99, _) = quantiles_ms(histogram);
        result.put(&format!("{name}_p50_ms"), p50.into());
        result.put(&format!("{name}_p99_ms"), p99.into());
        result.put(&format!("{name}_count"), histogram.len().into());
    }
    let (p50, p99, _) = quantiles_ms(&shown);
    result.put("shown_p50_ms", p50.into());
    result.put("shown_p99_ms", p99.into());
    let (p50, _, _) = quantiles_ms(&turn_length);
    result.put("turn_p50_ms", p50.into());
    result.put("turn_min_ms", (turn_length.min() as f64 / 1000.0).into());
    result.put("agent_delay_ms", options.agent_delay_ms(scenario).into());
    result.put("accounts", account_count.into());
    result.put("devices_per_account", per_account.into());
    result.put("rate_per_account", rate.into());
    result.put("turns_sent", turns_sent.into());
    result.put("turns_per_s", (turns_sent as f64 / cost.seconds).into());
    let expected = turns_sent * (per_account as u64 - 1);
    result.put("turn_ends_expected", expected.into());
    result.put("turn_ends_seen", turns_seen.into());
    if turns_seen < expected {
        stats.error(format!("{} turn ends never seen", expected - turns_seen));
    }
    bench.fill_errors(&mut result);
    Ok(result)
}

/// Device 0 of an account: sends a stamped `message.send` every `period` (after `phase`)
/// until `stop`, reading (and counting) everything it receives until `done`.
#[allow(clippy::too_many_arguments)]
async fn send_turns(
    mut connection: Connection,
    account: usize,
    period: Duration,
    phase: Duration,
    sent: Arc<Vec<AtomicU64>>,
    stats: Arc<LiveStats>,
    mut stop: watch::Receiver<bool>,
    mut done: watch::Receiver<bool>,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + phase, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sending = true;
    loop {
        tokio::select! {
            _ = ticks.tick(), if sending => {
                let text = stamped_text(stats.now_us());
                if let Err(err) = connection.send_message(&text).await {
                    stats.error(format!("message.send: {err:#}"));
                    return;
                }
                sent[account].fetch_add(1, Ordering::Relaxed);
            }
            _ = stop.changed(), if sending => sending = false,
            _ = done.changed() => return,
            incoming = connection.next() => match incoming {
                Incoming::Text(text) => {
                    stats.frames_received(1);
                    if FrameHead::parse(&text).is_some_and(|head| head.kind == "error") {
                        stats.error(format!("sender got {text}"));
                    }
                }
                Incoming::Closed(code) => {
                    stats.error(format!("sender closed (code {code:?})"));
                    return;
                }
            },
        }
    }
}

/// What one watching device saw.
struct Seen {
    /// Turns that ended.
    turns: u64,
    /// send → `message.stop`.
    stop: Histogram<u64>,
    /// send → `message.start`: the turn has begun (its `agent.busy` comes just before).
    started: Histogram<u64>,
    /// send → the user's message shown, for messages sent while an earlier one of the
    /// account was still unanswered.
    shown_busy: Histogram<u64>,
    /// The same for messages sent while every earlier one was answered.
    shown_idle: Histogram<u64>,
    /// `message.start` → `message.stop` of a turn: how long the agent worked.
    turn_length: Histogram<u64>,
}

/// Another device of the account: the turns it sees, their latencies, once sending stopped
/// and every turn sent ended (or the drain timeout passed).
async fn watch_turns(
    mut connection: Connection,
    account: usize,
    sent: Arc<Vec<AtomicU64>>,
    stats: Arc<LiveStats>,
    mut stop: watch::Receiver<bool>,
) -> Seen {
    let mut seen = Seen {
        turns: 0,
        stop: latency_histogram(),
        started: latency_histogram(),
        shown_busy: latency_histogram(),
        shown_idle: latency_histogram(),
        turn_length: latency_histogram(),
    };
    let mut pending: VecDeque<u64> = VecDeque::new();
    let mut front_updated = false;
    let mut front_started = false;
    let mut turn_began = None;
    let mut drain_deadline = None;
    let mut checks = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            _ = stop.changed(), if drain_deadline.is_none() => {
                drain_deadline = Some(tokio::time::Instant::now() + DRAIN_TIMEOUT);
            }
            _ = checks.tick() => {
                if let Some(deadline) = drain_deadline {
                    if seen.turns >= sent[account].load(Ordering::Relaxed) || tokio::time::Instant::now() > deadline {
                        return seen;
                    }
                }
            }
            incoming = connection.next() => {
                let text = match incoming {
                    Incoming::Text(text) => text,
                    Incoming::Closed(code) => {
                        stats.error(format!("receiver closed (code {code:?})"));
                        return seen;
                    }
                };
                stats.frames_received(1);
                let Some(head) = FrameHead::parse(&text) else {
                    stats.error("unreadable frame");
                    continue;
                };
                let now = stats.now_us();
                match head.kind {
                    "message" => {
                        if let Some(stamp) = stamp_in(&text) {
                            let shown = if pending.is_empty() {
                                &mut seen.shown_idle
                            } else {
                                &mut seen.shown_busy
                            };
                            shown.saturating_record(now.saturating_sub(stamp).max(1));
                            pending.push_back(stamp);
                        }
                    }
                    "message.start" if !front_started => {
                        if let Some(&stamp) = pending.front() {
                            seen.started.saturating_record(now.saturating_sub(stamp).max(1));
                            front_started = true;
                            turn_began = Some(now);
                        }
                    }
                    "message.update" if !front_updated => {
                        if let Some(&stamp) = pending.front() {
                            stats.record_latency_us(now.saturating_sub(stamp));
                            front_updated = true;
                        }
                    }
                    "message.stop" => {
                        if let Some(stamp) = stamp_in(&text) {
                            seen.stop.saturating_record(now.saturating_sub(stamp).max(1));
                            if let Some(began) = turn_began.take() {
                                seen.turn_length.saturating_record(now.saturating_sub(began).max(1));
                            }
                            pending.retain(|&p| p != stamp);
                            seen.turns += 1;
                        }
                        front_updated = false;
                        front_started = false;
                    }
                    "error" => stats.error(format!("receiver got {text}")),
                    _ => {}
                }
            }
        }
    }
}
