//! The gateway's counters and gauges, rendered as Prometheus text at `GET /metrics`.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

macro_rules! gateway_metrics {
    ($( $field:ident : $kind:ident = $help:literal ),* $(,)?) => {
        /// Process-wide gateway metrics; each field is one Prometheus series.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $( #[doc = $help] pub $field: gateway_metrics!(@type $kind), )*
        }

        impl Metrics {
            /// Prometheus text exposition of every series.
            pub fn render(&self) -> String {
                let mut out = String::new();
                $(
                    let _ = writeln!(out, "# HELP iris_gateway_{} {}", stringify!($field), $help);
                    let _ = writeln!(out, "# TYPE iris_gateway_{} {}", stringify!($field), stringify!($kind));
                    let _ = writeln!(out, "iris_gateway_{} {}", stringify!($field), self.$field.load(Ordering::Relaxed));
                )*
                out
            }
        }
    };
    (@type counter) => { AtomicU64 };
    (@type gauge) => { AtomicI64 };
}

gateway_metrics! {
    connections: gauge = "Open WebSocket connections.",
    paired_devices: gauge = "Connections that completed hello.",
    connections_total: counter = "WebSocket connections accepted.",
    auth_failures_total: counter = "hello frames rejected for a bad token.",
    frames_received_total: counter = "Text frames received from devices.",
    frames_sent_total: counter = "Frames sent to devices.",
    protocol_errors_total: counter = "Frames answered with an error for bad input.",
    rate_limited_total: counter = "Frames refused over the per-connection rate limit.",
    requests_forwarded_total: counter = "Requests forwarded to workers.",
    deliveries_total: counter = "Entries read from this node's delivery stream.",
    syncs_total: counter = "sync requests answered.",
    sync_resets_total: counter = "sync requests answered with reset.",
    replayed_frames_total: counter = "Outbox frames sent by sync replays and gap fills.",
    gap_fills_total: counter = "Seq gaps in live delivery filled from the outbox.",
    send_queue_overflows_total: counter = "Times a session's send queue was full and it fell behind.",
    frames_left_in_outbox_total: counter = "Outboxed frames not queued to a lagging session (it replays them).",
    frames_coalesced_total: counter = "Live-only frames replaced by a newer one (or dropped) for a lagging session.",
    slow_consumers_total: counter = "Sessions closed for staying behind past the slow-consumer bound.",
    degraded: gauge = "1 while the node cannot reach Redis (sessions told degraded).",
    degraded_total: counter = "Times the node became degraded (Redis unreachable).",
    epoch_changes_total: counter = "Times the cluster epoch was found missing or changed (Redis lost its data).",
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_renders_with_help_and_type() {
        let metrics = Metrics::default();
        incr(&metrics.syncs_total);
        let text = metrics.render();
        assert!(text.contains("# TYPE iris_gateway_syncs_total counter"));
        assert!(text.contains("iris_gateway_syncs_total 1"));
        assert!(text.contains("# TYPE iris_gateway_connections gauge"));
    }
}
