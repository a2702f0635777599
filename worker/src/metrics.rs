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

/// Every outcome a turn ends with (`turns_total`'s label values), shown from the start.
pub const TURN_OUTCOMES: [&str; 4] = ["ok", "error", "interrupted", "stopped"];

static METRICS: LazyLock<Arc<Metrics>> = LazyLock::new(|| {
    let metrics = Metrics::default();
    metrics.turns_total.declare(&TURN_OUTCOMES);
    Arc::new(metrics)
});

/// The process's metrics.
pub fn get() -> &'static Arc<Metrics> {
    &METRICS
}

pub use iris_shared::metrics::{incr, set, shift};

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves that no two series families of the worker's page (its own, the process series
    /// and `iris_build_info`) share an OpenMetrics family name.
    #[test]
    fn no_two_families_share_an_openmetrics_name() {
        let page = get().render();
        assert!(page.contains("# TYPE iris_build_info gauge"), "{page}");
        assert_eq!(
            iris_shared::metrics::families::clashes(&page),
            Vec::<String>::new()
        );
    }

    /// Proves that every turn outcome is on the page at 0 before any turn ended, so the
    /// first interrupted turn already counts in `increase()`.
    #[test]
    fn every_turn_outcome_is_shown_before_it_happens() {
        let page = get().render();
        for outcome in TURN_OUTCOMES {
            let series = format!("iris_worker_turns_total{{outcome=\"{outcome}\"}} ");
            assert!(page.contains(&series), "{series} missing:\n{page}");
        }
    }
}
