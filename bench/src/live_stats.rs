//! What every connection task of a scenario reports while it runs: connections open,
//! frames received, errors (the first few kept with their reason) and latencies into an
//! HDR histogram at microsecond resolution. One shared instance per scenario; recording is
//! an atomic add or a short uncontended lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use hdrhistogram::Histogram;

/// Errors whose reason is kept for the report.
const KEPT_ERRORS: usize = 5;
/// Highest latency tracked (µs): one minute.
const MAX_LATENCY_US: u64 = 60_000_000;

/// A latency histogram in microseconds.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

/// Shared counters of one scenario run.
pub struct LiveStats {
    started: Instant,
    pub connections: AtomicU64,
    pub frames: AtomicU64,
    errors: AtomicU64,
    first_errors: Mutex<Vec<String>>,
    latency: Mutex<Histogram<u64>>,
    phase: Mutex<&'static str>,
}

impl Default for LiveStats {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveStats {
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            connections: AtomicU64::new(0),
            frames: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_errors: Mutex::new(Vec::new()),
            latency: Mutex::new(latency_histogram()),
            phase: Mutex::new("starting"),
        }
    }

    /// Microseconds since the run started: the clock of stamped texts.
    pub fn now_us(&self) -> u64 {
        self.started.elapsed().as_micros() as u64
    }

    /// One received frame (or many).
    pub fn frames_received(&self, count: u64) {
        self.frames.fetch_add(count, Ordering::Relaxed);
    }

    /// A connection opened (paired).
    pub fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection closed.
    pub fn connection_closed(&self) {
        self.connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// Something went wrong; the first few reasons are kept.
    pub fn error(&self, reason: impl std::fmt::Display) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.first_errors.lock().expect("error list");
        if kept.len() < KEPT_ERRORS {
            kept.push(reason.to_string());
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// The first errors' reasons.
    pub fn first_errors(&self) -> Vec<String> {
        self.first_errors.lock().expect("error list").clone()
    }

    /// A latency into the scenario's main histogram.
    pub fn record_latency_us(&self, micros: u64) {
        self.latency
            .lock()
            .expect("latency histogram")
            .saturating_record(micros.max(1));
    }

    /// p99 of the main histogram so far (ms).
    pub fn p99_ms(&self) -> Option<f64> {
        let latency = self.latency.lock().expect("latency histogram");
        (!latency.is_empty()).then(|| latency.value_at_quantile(0.99) as f64 / 1000.0)
    }

    /// The main histogram.
    pub fn latency(&self) -> Histogram<u64> {
        self.latency.lock().expect("latency histogram").clone()
    }

    /// Names what the scenario is doing now (shown in progress lines).
    pub fn set_phase(&self, phase: &'static str) {
        *self.phase.lock().expect("phase") = phase;
    }

    pub fn phase(&self) -> &'static str {
        *self.phase.lock().expect("phase")
    }
}
