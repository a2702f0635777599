//! A latency histogram with fixed buckets (seconds): lock-free counts for `/metrics`, and
//! the same observations recorded into an OpenTelemetry histogram with the same bounds
//! once the set is registered with a meter.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Bucket bounds for frame and request latencies: 0.25 ms to 10 s.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Bucket bounds for agent turns: 10 ms to 10 min.
pub const TURN_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// Observations counted into buckets, with their sum.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    /// One count per bound, plus the `+Inf` bucket; not cumulative.
    counts: Vec<AtomicU64>,
    sum_nanos: AtomicU64,
    otel: OnceLock<opentelemetry::metrics::Histogram<f64>>,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending, in seconds).
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_nanos: AtomicU64::new(0),
            otel: OnceLock::new(),
        }
    }

    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = self
            .bounds
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(self.bounds.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Some(otel) = self.otel.get() {
            otel.record(seconds, &[]);
        }
    }

    /// Records one observation given in milliseconds (negative clock skew counts as 0).
    pub fn observe_ms(&self, elapsed_ms: i64) {
        self.observe(Duration::from_millis(elapsed_ms.max(0).unsigned_abs()));
    }

    /// Observations recorded so far.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// From now on also records into an OpenTelemetry histogram of `meter`.
    pub fn record_through(&self, meter: &opentelemetry::metrics::Meter, name: &str, help: &str) {
        let otel = meter
            .f64_histogram(name.to_owned())
            .with_description(help.to_owned())
            .with_unit("s")
            .with_boundaries(self.bounds.to_vec())
            .build();
        let _ = self.otel.set(otel);
    }

    /// Appends the Prometheus exposition (cumulative buckets, sum, count).
    pub fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        cumulative += self.counts[self.bounds.len()].load(Ordering::Relaxed);
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {cumulative}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_render_cumulatively_with_sum_and_count() {
        let latency = Histogram::new(&[0.001, 0.01]);
        latency.observe(Duration::from_micros(500));
        latency.observe(Duration::from_millis(5));
        latency.observe(Duration::from_secs(2));
        let mut text = String::new();
        latency.render(&mut text, "x_seconds", "X.");
        assert!(text.contains("x_seconds_bucket{le=\"0.001\"} 1\n"));
        assert!(text.contains("x_seconds_bucket{le=\"0.01\"} 2\n"));
        assert!(text.contains("x_seconds_bucket{le=\"+Inf\"} 3\n"));
        assert!(text.contains("x_seconds_sum 2.0055\n"));
        assert!(text.contains("x_seconds_count 3\n"));
    }

    #[test]
    fn an_observation_on_a_bound_falls_in_that_bucket() {
        let latency = Histogram::new(&[0.001, 0.01]);
        latency.observe(Duration::from_millis(1));
        let mut text = String::new();
        latency.render(&mut text, "x", "X.");
        assert!(text.contains("x_bucket{le=\"0.001\"} 1\n"));
    }

    #[test]
    fn negative_millis_count_as_zero() {
        let latency = Histogram::new(LATENCY_BUCKETS);
        latency.observe_ms(-5);
        assert_eq!(latency.count(), 1);
    }
}
