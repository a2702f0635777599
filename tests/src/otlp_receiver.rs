//! A real OTLP receiver for the telemetry tests: the collector's gRPC services (traces,
//! metrics, logs) and the OTLP/HTTP protobuf routes (`POST /v1/traces`, `/v1/metrics`,
//! `/v1/logs`), decoding what the nodes export with the official protobuf definitions and
//! keeping it flattened for assertions: spans with their trace and parent, the latest value
//! of every metric series, and log records with their trace.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;

/// One received span.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// `service.name` of the exporting process.
    pub service: String,
    /// `service.instance.id` (the node id).
    pub node: String,
    /// Span name.
    pub name: String,
    /// Trace id, hex.
    pub trace_id: String,
    /// Span id, hex.
    pub span_id: String,
    /// Parent span id, hex (empty for a root).
    pub parent_span_id: String,
    /// Span kind: internal, server, client, producer, consumer (or unspecified).
    pub kind: &'static str,
    /// Attributes as text.
    pub attributes: BTreeMap<String, String>,
}

/// The latest value of one metric series of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedPoint {
    /// Sum or gauge value; for a histogram, its observation count.
    pub value: f64,
}

/// One received log record.
#[derive(Debug, Clone)]
pub struct ReceivedLog {
    /// `service.name` of the exporting process.
    pub service: String,
    /// The record's body.
    pub body: String,
    /// Trace id, hex (empty when logged outside a span).
    pub trace_id: String,
}

/// Everything received so far.
#[derive(Debug, Default)]
pub struct Received {
    /// Spans, in arrival order.
    pub spans: Vec<ReceivedSpan>,
    /// Latest point by (service, node, metric name, labels as `k=v,...`).
    pub points: BTreeMap<(String, String, String, String), ReceivedPoint>,
    /// Log records, in arrival order.
    pub logs: Vec<ReceivedLog>,
    /// Export requests by transport (`grpc`, `http`), for asserting both were used.
    pub requests_by_transport: BTreeMap<&'static str, u64>,
}

type Store = Arc<Mutex<Received>>;

/// A running receiver: gRPC on one port, HTTP on another.
pub struct OtlpReceiver {
    grpc: SocketAddr,
    http: SocketAddr,
    store: Store,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl OtlpReceiver {
    /// Starts both listeners on free ports.
    pub async fn start() -> Self {
        let store = Store::default();
        let grpc_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the OTLP gRPC port");
        let grpc = grpc_listener.local_addr().expect("gRPC address");
        let service = Collector {
            store: store.clone(),
        };
        let grpc_task = tokio::spawn(async move {
            let incoming = tonic::transport::server::TcpIncoming::from(grpc_listener);
            let _ = tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(service.clone()))
                .add_service(MetricsServiceServer::new(service.clone()))
                .add_service(LogsServiceServer::new(service))
                .serve_with_incoming(incoming)
                .await;
        });
        let http_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the OTLP HTTP port");
        let http = http_listener.local_addr().expect("HTTP address");
        let routes = axum::Router::new()
            .route("/v1/traces", post(http_traces))
            .route("/v1/metrics", post(http_metrics))
            .route("/v1/logs", post(http_logs))
            .with_state(store.clone());
        let http_task = tokio::spawn(async move {
            let _ = axum::serve(http_listener, routes).await;
        });
        Self {
            grpc,
            http,
            store,
            tasks: vec![grpc_task, http_task],
        }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for OTLP/gRPC.
    pub fn grpc_endpoint(&self) -> String {
        format!("http://{}", self.grpc)
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for OTLP/HTTP (the exporters add `/v1/<signal>`).
    pub fn http_endpoint(&self) -> String {
        format!("http://{}", self.http)
    }

    /// Runs `check` over what was received until it returns `Some`, or panics after
    /// `timeout` with `what` and a summary of what did arrive.
    pub async fn wait_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&Received) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            {
                let received = self.store.lock().expect("receiver lock");
                if let Some(found) = check(&received) {
                    return found;
                }
                if Instant::now() >= deadline {
                    let names: Vec<String> = received
                        .spans
                        .iter()
                        .map(|s| format!("{}@{} {} {}", s.name, s.node, s.trace_id, s.span_id))
                        .collect();
                    panic!(
                        "OTLP receiver: {what} did not arrive within {timeout:?}; spans: {names:#?}; {} metric series; {} log records; requests {:?}",
                        received.points.len(),
                        received.logs.len(),
                        received.requests_by_transport
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[derive(Clone)]
struct Collector {
    store: Store,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        record_traces(&self.store, request.into_inner(), "grpc");
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        record_metrics(&self.store, request.into_inner(), "grpc");
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl LogsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportLogsServiceRequest>,
    ) -> Result<tonic::Response<ExportLogsServiceResponse>, tonic::Status> {
        record_logs(&self.store, request.into_inner(), "grpc");
        Ok(tonic::Response::new(ExportLogsServiceResponse::default()))
    }
}

async fn http_traces(state: axum::extract::State<Store>, body: Bytes) -> axum::http::StatusCode {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            record_traces(&state, request, "http");
            axum::http::StatusCode::OK
        }
        Err(_) => axum::http::StatusCode::BAD_REQUEST,
    }
}

async fn http_metrics(state: axum::extract::State<Store>, body: Bytes) -> axum::http::StatusCode {
    match ExportMetricsServiceRequest::decode(body) {
        Ok(request) => {
            record_metrics(&state, request, "http");
            axum::http::StatusCode::OK
        }
        Err(_) => axum::http::StatusCode::BAD_REQUEST,
    }
}

async fn http_logs(state: axum::extract::State<Store>, body: Bytes) -> axum::http::StatusCode {
    match ExportLogsServiceRequest::decode(body) {
        Ok(request) => {
            record_logs(&state, request, "http");
            axum::http::StatusCode::OK
        }
        Err(_) => axum::http::StatusCode::BAD_REQUEST,
    }
}

/// The name of an OTLP span kind.
fn kind_name(kind: i32) -> &'static str {
    match kind {
        1 => "internal",
        2 => "server",
        3 => "client",
        4 => "producer",
        5 => "consumer",
        _ => "unspecified",
    }
}

fn record_traces(store: &Store, request: ExportTraceServiceRequest, transport: &'static str) {
    let mut received = store.lock().expect("receiver lock");
    *received.requests_by_transport.entry(transport).or_default() += 1;
    for resource_spans in request.resource_spans {
        let (service, node) = identity(resource_spans.resource.as_ref());
        for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
            received.spans.push(ReceivedSpan {
                service: service.clone(),
                node: node.clone(),
                name: span.name,
                trace_id: hex::encode(span.trace_id),
                span_id: hex::encode(span.span_id),
                parent_span_id: hex::encode(span.parent_span_id),
                kind: kind_name(span.kind),
                attributes: attributes(&span.attributes),
            });
        }
    }
}

fn record_metrics(store: &Store, request: ExportMetricsServiceRequest, transport: &'static str) {
    let mut received = store.lock().expect("receiver lock");
    *received.requests_by_transport.entry(transport).or_default() += 1;
    for resource_metrics in request.resource_metrics {
        let (service, node) = identity(resource_metrics.resource.as_ref());
        for metric in resource_metrics
            .scope_metrics
            .into_iter()
            .flat_map(|s| s.metrics)
        {
            let points: Vec<(String, f64)> = match metric.data {
                Some(metric::Data::Sum(sum)) => sum.data_points.iter().map(number).collect(),
                Some(metric::Data::Gauge(gauge)) => gauge.data_points.iter().map(number).collect(),
                Some(metric::Data::Histogram(histogram)) => histogram
                    .data_points
                    .iter()
                    .map(|p| (labels(&p.attributes), p.count as f64))
                    .collect(),
                _ => Vec::new(),
            };
            for (labels, value) in points {
                let key = (service.clone(), node.clone(), metric.name.clone(), labels);
                received.points.insert(key, ReceivedPoint { value });
            }
        }
    }
}

fn record_logs(store: &Store, request: ExportLogsServiceRequest, transport: &'static str) {
    let mut received = store.lock().expect("receiver lock");
    *received.requests_by_transport.entry(transport).or_default() += 1;
    for resource_logs in request.resource_logs {
        let (service, _) = identity(resource_logs.resource.as_ref());
        for record in resource_logs
            .scope_logs
            .into_iter()
            .flat_map(|s| s.log_records)
        {
            received.logs.push(ReceivedLog {
                service: service.clone(),
                body: record.body.as_ref().map(text).unwrap_or_default(),
                trace_id: hex::encode(record.trace_id),
            });
        }
    }
}

fn number(point: &opentelemetry_proto::tonic::metrics::v1::NumberDataPoint) -> (String, f64) {
    let value = match point.value {
        Some(number_data_point::Value::AsInt(v)) => v as f64,
        Some(number_data_point::Value::AsDouble(v)) => v,
        None => 0.0,
    };
    (labels(&point.attributes), value)
}

/// `service.name` and `service.instance.id` of a resource.
fn identity(resource: Option<&Resource>) -> (String, String) {
    let attributes = resource
        .map(|r| attributes(&r.attributes))
        .unwrap_or_default();
    (
        attributes.get("service.name").cloned().unwrap_or_default(),
        attributes
            .get("service.instance.id")
            .cloned()
            .unwrap_or_default(),
    )
}

fn attributes(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map(text).unwrap_or_default(),
            )
        })
        .collect()
}

/// Attributes as `k=v` pairs joined by `,` (sorted), the key of a series.
fn labels(attributes: &[KeyValue]) -> String {
    self::attributes(attributes)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}
