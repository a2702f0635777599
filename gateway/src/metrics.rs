//! The gateway's counters, gauges and histograms, rendered as Prometheus text at
//! `GET /metrics` and exported by OTLP when configured.

use iris_shared::metrics::LATENCY_BUCKETS;

pub use iris_shared::metrics::{add, incr, set, shift};

iris_shared::metric_set! {
    /// Process-wide gateway metrics; each field is one Prometheus series.
    pub struct Metrics("iris_gateway_") {
        connections: gauge = "Open WebSocket connections.",
        paired_devices: gauge = "Connections that completed hello (connected devices).",
        degraded: gauge = "1 while the node cannot reach Redis (sessions told degraded).",
        draining: gauge = "1 after SIGTERM, while sessions are told to reconnect elsewhere.",
        connections_accepted_total: counter = "WebSocket connections accepted.",
        auth_failures_total: counter = "hello frames rejected for a bad token.",
        frames_received_total: labeled("type") = "Frames received from devices, by frame type (invalid: unparsable, binary: media chunks).",
        frames_sent_total: labeled("type") = "Frames sent to devices, by frame type.",
        protocol_errors_total: counter = "Frames answered with an error for bad input.",
        rate_limited_total: counter = "Frames refused over the per-connection rate limit.",
        requests_forwarded_total: counter = "Requests forwarded to workers.",
        outbox_appends_total: counter = "Frames this gateway appended to account outboxes: users' own messages (and agent.busy when no worker held the chat).",
        deliveries_total: counter = "Messages taken from the live channels of this node's accounts.",
        syncs_total: counter = "sync requests answered.",
        sync_resets_total: counter = "sync requests answered with reset.",
        replayed_frames_total: counter = "Outbox frames sent by sync replays and gap fills.",
        gap_fills_total: counter = "Seq gaps in live delivery filled from the outbox.",
        send_queue_overflows_total: counter = "Times a session's send queue was full and it fell behind.",
        frames_left_in_outbox_total: counter = "Outboxed frames not queued to a lagging session (it replays them).",
        frames_coalesced_total: counter = "Live-only frames replaced by a newer one (or dropped) for a lagging session.",
        slow_consumers_total: counter = "Sessions closed for staying behind past the slow-consumer bound.",
        degradations_total: counter = "Times the node became degraded (Redis unreachable).",
        epoch_changes_total: counter = "Times the cluster epoch was found missing or changed (Redis lost its data).",
        redis_errors_total: counter = "Redis commands that failed.",
        http_refused_total: labeled("reason") = "HTTP requests and connections refused before a session existed, by reason (docs/reliability.md).",
        delivery_latency_seconds: histogram(LATENCY_BUCKETS) = "From a worker writing a live frame to this node handing it to the device's socket.",
        sync_replay_seconds: histogram(LATENCY_BUCKETS) = "From a sync request to its sync.done.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_renders_with_help_and_type() {
        let metrics = Metrics::default();
        incr(&metrics.syncs_total);
        metrics.frames_sent_total.incr("message.update");
        let text = metrics.render();
        assert!(text.contains("# TYPE iris_gateway_syncs_total counter"));
        assert!(text.contains("iris_gateway_syncs_total 1"));
        assert!(text.contains("iris_gateway_frames_sent_total{type=\"message.update\"} 1"));
        assert!(text.contains("# TYPE iris_gateway_delivery_latency_seconds histogram"));
    }

    /// Proves that no two series families of the gateway's page (its own, the process series
    /// and `iris_build_info`) share an OpenMetrics family name.
    #[test]
    fn no_two_families_share_an_openmetrics_name() {
        let page = Metrics::default().render();
        assert!(page.contains("# TYPE iris_build_info gauge"), "{page}");
        assert_eq!(
            iris_shared::metrics::families::clashes(&page),
            Vec::<String>::new()
        );
    }
}
