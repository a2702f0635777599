//! Logs, traces and metrics of both binaries.
//!
//! Logs always go to stderr filtered by `RUST_LOG` (default `info`), as human-readable
//! lines or as JSON objects ([`LogFormat`], `IRIS_LOG_FORMAT`); a line written inside a
//! traced span names its `trace_id`. With an OTLP
//! endpoint configured by the standard `OTEL_*` variables ([`settings`]), spans, metrics
//! and the same log records are exported too; without one nothing is exported and no span
//! is even created ([`enabled`]). Trace context crosses processes inside Redis stream
//! entries ([`propagation`]), so one trace follows a message from the gateway through the
//! worker and the upstream agent back to the gateways.

mod log_format;
mod otlp;
pub mod propagation;
pub mod settings;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::telemetry::otlp::Exporters;
use crate::telemetry::settings::OtelSettings;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// How log lines are written (`IRIS_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields.message`, `target`, `span`,
    /// `spans`, and `trace_id`/`span_id` inside a traced span), for log pipelines.
    Json,
}

/// Longest a shutdown waits for the exporters to flush.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// Whether spans are exported (an OTLP traces endpoint is configured); callers skip
/// building spans when not.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The running telemetry; [`Telemetry::shutdown`] flushes what is not exported yet.
#[derive(Debug)]
pub struct Telemetry {
    exporters: Option<Exporters>,
}

/// Installs logging in `format` and, when configured, OTLP export for `service` (the
/// default `service.name`; `OTEL_SERVICE_NAME` wins) on node `node_id`. Call once, before
/// the binary's runtime starts. A bad OTLP setting is reported and export stays off: the
/// node runs without telemetry rather than not at all.
pub fn init(service: &'static str, node_id: &str, format: LogFormat) -> Telemetry {
    let settings = OtelSettings::from_env();
    let (exporters, problem) = match settings
        .as_ref()
        .map(|s| Exporters::start(s, service, node_id))
    {
        Some(Ok(exporters)) => (Some(exporters), None),
        Some(Err(err)) => (None, Some(err)),
        None => (None, None),
    };
    let filter = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let text = (format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .event_format(log_format::WithTraceId::default())
            .with_filter(filter())
    });
    let json = (format == LogFormat::Json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
            .event_format(log_format::JsonWithTraceId::default())
            .with_filter(filter())
    });
    let (spans, logs) = match &exporters {
        Some(exporters) => (exporters.span_layer(), exporters.log_layer()),
        None => (None, None),
    };
    ENABLED.store(spans.is_some(), Ordering::Relaxed);
    let _ = tracing_subscriber::registry()
        .with(text)
        .with(json)
        .with(spans)
        .with(logs)
        .try_init();
    if let Some(err) = problem {
        tracing::error!(%err, "OpenTelemetry export is off: bad OTEL_* setting");
    }
    if let (Some(settings), Some(_)) = (&settings, &exporters) {
        tracing::info!(endpoint = %settings.describe(), "exporting OpenTelemetry data");
    }
    Telemetry { exporters }
}

/// Logging only (for short commands such as `token create`).
pub fn init_logging() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The meter that metric sets register with (a no-op one when metrics are not exported).
pub fn meter(service: &'static str) -> opentelemetry::metrics::Meter {
    opentelemetry::global::meter(service)
}

impl Telemetry {
    /// Flushes and stops the exporters, waiting at most a few seconds (an unreachable
    /// collector must not hold up the node's exit).
    pub fn shutdown(self) {
        if let Some(exporters) = self.exporters {
            exporters.shutdown(FLUSH_LIMIT);
        }
    }
}
