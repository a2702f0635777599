//! The worker's metrics: one process-wide set, rendered at `GET /metrics` on
//! `IRIS_METRICS_LISTEN` and exported by OTLP when configured.

use std::sync::{Arc, LazyLock};

use iris_shared::metrics::{LATENCY_BUCKETS, TURN_BUCKETS};

iris_shared::metric_set! {
    /// Process-wide worker metrics; each field is one Prometheus series.
    pub struct Metrics("iris_worker_") {
        partitions_owned: gauge = "Partitions whose lease this worker holds.",
        chats_active: gauge = "Chat actors running.",
        turns_running: gauge = "Agent turns running now.",
        draining: gauge = "1 after SIGTERM, while running turns finish.",
        partition_takeovers_total: counter = "Partition leases acquired (at start, after a release, or from a dead owner).",
        partitions_released_total: counter = "Partition leases given up (rebalance or drain).",
        inbound_entries_total: counter = "Inbound requests read from owned partitions.",
        outbox_appends_total: counter = "Frames appended to account outboxes.",
        frames_published_total: labeled("type") = "Frames written for devices, by frame type.",
        turns_total: labeled("outcome") = "Agent turns ended, by outcome (ok, error, interrupted, stopped).",
        upstream_errors_total: counter = "Turns that failed on the upstream agent.",
        redis_errors_total: counter = "Redis commands that failed.",
        fenced_total: counter = "Chats stopped because a newer owner writes for them.",
        epoch_changes_total: counter = "Times Redis was found to have lost its data (chats and leases dropped).",
        turn_duration_seconds: histogram(TURN_BUCKETS) = "Agent turn from start to its last frame.",
        turn_first_token_seconds: histogram(TURN_BUCKETS) = "Agent turn from start to its first streamed text.",
        inbound_lag_seconds: histogram(LATENCY_BUCKETS) = "From a gateway receiving a request to this worker reading it.",
    }
}

static METRICS: LazyLock<Arc<Metrics>> = LazyLock::new(Arc::default);

/// The process's metrics.
pub fn get() -> &'static Arc<Metrics> {
    &METRICS
}

pub use iris_shared::metrics::{incr, set, shift};
