//! The OTLP exporters: providers for spans, metrics and log records built from
//! [`OtelSettings`], installed as the global tracer/meter providers and as layers of the
//! tracing subscriber. gRPC exports run on a small runtime of their own, so they never
//! depend on (or block) the node's actix runtime, and a shutdown cannot hang on it.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge;
use opentelemetry_otlp::{LogExporter, MetricExporter, SpanExporter};
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::Subscriber;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer};

use super::settings::{OtelSettings, Protocol};

/// Targets whose own events must not be exported: the exporters log through them, and
/// exporting those records would feed back into the exporters.
const QUIET_TARGETS: &[&str] = &[
    "h2",
    "hyper",
    "hyper_util",
    "tonic",
    "tower",
    "reqwest",
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry_otlp",
    "opentelemetry_http",
];

/// Running exporters.
#[derive(Debug)]
pub(super) struct Exporters {
    service: &'static str,
    runtime: Option<tokio::runtime::Runtime>,
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    logger: Option<SdkLoggerProvider>,
}

impl Exporters {
    /// Builds and installs the exporters `settings` ask for.
    pub(super) fn start(
        settings: &OtelSettings,
        service: &'static str,
        node_id: &str,
    ) -> Result<Self, String> {
        let resource = resource(service, node_id);
        let runtime = match settings.protocol {
            Protocol::Grpc => Some(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("iris-otlp")
                    .enable_all()
                    .build()
                    .map_err(|err| format!("cannot start the OTLP runtime: {err}"))?,
            ),
            Protocol::HttpProtobuf => None,
        };
        // tonic's channel binds to the runtime it is built in.
        let _entered = runtime.as_ref().map(|runtime| runtime.enter());
        let grpc = settings.protocol == Protocol::Grpc;
        let fail = |signal: &str, err: opentelemetry_otlp::ExporterBuildError| {
            format!("cannot build the OTLP {signal} exporter: {err}")
        };
        let tracer = settings
            .traces
            .then(|| {
                let exporter = if grpc {
                    SpanExporter::builder().with_tonic().build()
                } else {
                    SpanExporter::builder().with_http().build()
                };
                exporter.map_err(|err| fail("span", err)).map(|exporter| {
                    SdkTracerProvider::builder()
                        .with_resource(resource.clone())
                        .with_batch_exporter(exporter)
                        .build()
                })
            })
            .transpose()?;
        let meter = settings
            .metrics
            .then(|| {
                let exporter = if grpc {
                    MetricExporter::builder().with_tonic().build()
                } else {
                    MetricExporter::builder().with_http().build()
                };
                exporter.map_err(|err| fail("metric", err)).map(|exporter| {
                    SdkMeterProvider::builder()
                        .with_resource(resource.clone())
                        .with_periodic_exporter(exporter)
                        .build()
                })
            })
            .transpose()?;
        let logger = settings
            .logs
            .then(|| {
                let exporter = if grpc {
                    LogExporter::builder().with_tonic().build()
                } else {
                    LogExporter::builder().with_http().build()
                };
                exporter.map_err(|err| fail("log", err)).map(|exporter| {
                    SdkLoggerProvider::builder()
                        .with_resource(resource.clone())
                        .with_batch_exporter(exporter)
                        .build()
                })
            })
            .transpose()?;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        if let Some(tracer) = &tracer {
            opentelemetry::global::set_tracer_provider(tracer.clone());
        }
        if let Some(meter) = &meter {
            opentelemetry::global::set_meter_provider(meter.clone());
        }
        drop(_entered);
        Ok(Self {
            service,
            runtime,
            tracer,
            meter,
            logger,
        })
    }

    /// The layer that turns tracing spans into exported spans.
    pub(super) fn span_layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync>>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        let tracer = self.tracer.as_ref()?.tracer(self.service);
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(exported_events())
                .boxed(),
        )
    }

    /// The layer that exports log records (with the trace they happen in).
    pub(super) fn log_layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync>>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        let logger = self.logger.as_ref()?;
        Some(
            OpenTelemetryTracingBridge::new(logger)
                .with_filter(exported_events())
                .boxed(),
        )
    }

    /// Flushes and stops every provider within `limit`.
    pub(super) fn shutdown(self, limit: Duration) {
        let Self {
            runtime,
            tracer,
            meter,
            logger,
            ..
        } = self;
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if let Some(tracer) = tracer {
                let _ = tracer.shutdown();
            }
            if let Some(meter) = meter {
                let _ = meter.shutdown();
            }
            if let Some(logger) = logger {
                let _ = logger.shutdown();
            }
            let _ = done.send(());
        });
        if finished.recv_timeout(limit).is_err() {
            eprintln!("OpenTelemetry: exporters did not flush within {limit:?}; exiting anyway");
        }
        if let Some(runtime) = runtime {
            runtime.shutdown_background();
        }
    }
}

/// `RUST_LOG` (default `info`) without the exporters' own targets.
fn exported_events() -> EnvFilter {
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    for target in QUIET_TARGETS {
        if let Ok(directive) = format!("{target}=off").parse() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// What the node is: `service.name` (`OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES`,
/// else `service`), `service.instance.id` = the node id, and `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(service: &'static str, node_id: &str) -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::new("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    let mut builder = Resource::builder();
    if !named {
        builder = builder.with_service_name(service);
    }
    if detected
        .get(&opentelemetry::Key::new("service.instance.id"))
        .is_none()
    {
        builder = builder.with_attribute(KeyValue::new("service.instance.id", node_id.to_owned()));
    }
    builder
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}
