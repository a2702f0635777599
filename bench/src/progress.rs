//! The once-a-second progress line on stderr while a scenario runs: phase, connections
//! open, frames received per second, p99 so far and errors.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::live_stats::LiveStats;

/// Prints progress until dropped.
pub struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts printing `stats` for scenario `name` (nothing when `quiet`).
    pub fn start(name: &'static str, stats: Arc<LiveStats>, quiet: bool) -> Self {
        if quiet {
            return Self { task: None };
        }
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut ticks = tokio::time::interval(Duration::from_secs(1));
            ticks.tick().await;
            let mut last_frames = stats.frames.load(Ordering::Relaxed);
            let mut last_at = Instant::now();
            loop {
                ticks.tick().await;
                let frames = stats.frames.load(Ordering::Relaxed);
                let elapsed = last_at.elapsed().as_secs_f64().max(1e-3);
                let rate = (frames - last_frames) as f64 / elapsed;
                last_frames = frames;
                last_at = Instant::now();
                let p99 = stats
                    .p99_ms()
                    .map_or_else(|| "-".to_owned(), |ms| format!("{ms:.2} ms"));
                eprintln!(
                    "[{name} {:>4}s {}] connections {} | {rate:.0} frames/s | p99 {p99} | errors {}",
                    started.elapsed().as_secs(),
                    stats.phase(),
                    stats.connections.load(Ordering::Relaxed),
                    stats.error_count(),
                );
            }
        });
        Self { task: Some(task) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
