//! Process metrics both node kinds keep: lock-free counters, gauges, counters by one label
//! and histograms, declared once per binary with [`metric_set!`](crate::metric_set). A set
//! renders itself as Prometheus text (`GET /metrics`) and, registered with an OpenTelemetry
//! meter, reports the same values by OTLP: counters and gauges through callbacks that read
//! them, histograms by recording each value into both. OTLP names are the Prometheus names,
//! `_total` included, so a collector's Prometheus exporter with `add_metric_suffixes: false`
//! (deploy/otel/collector.yaml) gives back exactly the `/metrics` names.

#[doc(hidden)]
pub use opentelemetry;

pub mod build_info;
pub mod families;
mod histogram;
mod labeled;
pub mod process;
mod set;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

pub use histogram::{Histogram, LATENCY_BUCKETS, TURN_BUCKETS};
pub use labeled::LabeledCounter;

/// Adds one to a counter.
pub fn incr(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Adds `n` to a counter.
pub fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// Moves a gauge by `delta`.
pub fn shift(gauge: &AtomicI64, delta: i64) {
    gauge.fetch_add(delta, Ordering::Relaxed);
}

/// Sets a gauge.
pub fn set(gauge: &AtomicI64, value: i64) {
    gauge.store(value, Ordering::Relaxed);
}
