//! Publishing through the server API at a fixed total rate: launches are paced on a
//! 2 ms clock (so rates above 1,000/s need no sub-millisecond timer), spread over the
//! accounts and gateways in turn, with at most `--api-concurrency` requests in flight.
//! Each text carries its launch time, so devices can measure publish → receipt.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};

use crate::bench::Bench;
use crate::frame_head::stamped_text;

/// Pacing tick.
const TICK: Duration = Duration::from_millis(2);

/// What a publishing run did.
#[derive(Debug, Default)]
pub struct PublishTally {
    pub accepted: AtomicU64,
    pub failed: AtomicU64,
}

/// Publishes `rate` messages per second over `accounts` until `stop` turns true, then waits
/// for the requests in flight. Failures count in the tally and as errors.
pub async fn publish_paced(
    bench: &Bench,
    accounts: &[String],
    rate: f64,
    mut stop: watch::Receiver<bool>,
) -> Arc<PublishTally> {
    let tally = Arc::new(PublishTally::default());
    let in_flight = Arc::new(Semaphore::new(bench.options.api_concurrency.max(1)));
    let started = Instant::now();
    let mut launched: u64 = 0;
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut tasks = tokio::task::JoinSet::new();
    while !*stop.borrow() {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stop.changed() => break,
        }
        let due = (started.elapsed().as_secs_f64() * rate) as u64;
        while launched < due {
            let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
                break;
            };
            let index = launched as usize;
            launched += 1;
            let account = accounts[index % accounts.len()].clone();
            let gateways = &bench.cluster.gateways;
            let base = gateways[index % gateways.len()].http.clone();
            let api = bench.api.clone();
            let stats = Arc::clone(&bench.stats);
            let tally = Arc::clone(&tally);
            tasks.spawn(async move {
                let text = stamped_text(stats.now_us());
                match api.publish(&base, &account, &text).await {
                    Ok(()) => tally.accepted.fetch_add(1, Ordering::Relaxed),
                    Err(err) => {
                        stats.error(format!("publish: {err:#}"));
                        tally.failed.fetch_add(1, Ordering::Relaxed)
                    }
                };
                drop(permit);
            });
        }
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    tally
}

/// Publishes `count` messages to `account` as fast as `--api-concurrency` allows; returns
/// how many were accepted.
pub async fn publish_burst(bench: &Bench, account: &str, count: usize) -> u64 {
    use futures_util::stream::{self, StreamExt};
    let gateways = &bench.cluster.gateways;
    stream::iter(0..count)
        .map(|index| {
            let base = &gateways[index % gateways.len()].http;
            let text = format!("replay {index}");
            async move {
                match bench.api.publish(base, account, &text).await {
                    Ok(()) => 1,
                    Err(err) => {
                        bench.stats.error(format!("publish: {err:#}"));
                        0
                    }
                }
            }
        })
        .buffer_unordered(bench.options.api_concurrency.max(1))
        .fold(0u64, |total, ok| async move { total + ok })
        .await
}
