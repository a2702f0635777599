//! The standard OpenTelemetry environment variables this project reads itself (the SDK
//! reads the rest: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
//! `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, ...).

/// Wire protocol of the OTLP exporters (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP/gRPC (`grpc`, the default; port 4317).
    Grpc,
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`; port 4318).
    HttpProtobuf,
}

/// Which signals are exported, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtelSettings {
    /// The endpoint named by `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own variable).
    pub endpoint: String,
    /// gRPC or HTTP.
    pub protocol: Protocol,
    /// Export spans (`OTEL_TRACES_EXPORTER` is not `none`).
    pub traces: bool,
    /// Export metrics (`OTEL_METRICS_EXPORTER` is not `none`).
    pub metrics: bool,
    /// Export log records (`OTEL_LOGS_EXPORTER` is not `none`).
    pub logs: bool,
}

impl OtelSettings {
    /// Reads the process environment; `None` when nothing is to be exported (no endpoint,
    /// or `OTEL_SDK_DISABLED=true`).
    pub fn from_env() -> Option<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `var` (the environment, or a map in tests).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let var = |name: &str| {
            var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let endpoint = [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        ]
        .iter()
        .find_map(|name| var(name))?;
        let protocol = match var("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref() {
            Some(p) if p.starts_with("http") => Protocol::HttpProtobuf,
            Some(_) => Protocol::Grpc,
            // Unset: the endpoint's port says which receiver it is (4318 is OTLP/HTTP's).
            None if on_http_port(&endpoint) => Protocol::HttpProtobuf,
            None => Protocol::Grpc,
        };
        let on = |name: &str| var(name).is_none_or(|v| !v.eq_ignore_ascii_case("none"));
        let settings = Self {
            endpoint,
            protocol,
            traces: on("OTEL_TRACES_EXPORTER"),
            metrics: on("OTEL_METRICS_EXPORTER"),
            logs: on("OTEL_LOGS_EXPORTER"),
        };
        (settings.traces || settings.metrics || settings.logs).then_some(settings)
    }

    /// One line for the start-up log.
    pub fn describe(&self) -> String {
        let protocol = match self.protocol {
            Protocol::Grpc => "grpc",
            Protocol::HttpProtobuf => "http/protobuf",
        };
        let signals: Vec<&str> = [
            (self.traces, "traces"),
            (self.metrics, "metrics"),
            (self.logs, "logs"),
        ]
        .iter()
        .filter_map(|(on, name)| on.then_some(*name))
        .collect();
        format!(
            "{} ({protocol}: {})",
            crate::redact::in_text(&self.endpoint),
            signals.join(", ")
        )
    }
}

/// Whether `endpoint` names port 4318, the OTLP/HTTP port.
fn on_http_port(endpoint: &str) -> bool {
    let authority = endpoint.split("://").last().unwrap_or(endpoint);
    let host_port = authority.split('/').next().unwrap_or(authority);
    host_port.rsplit(':').next() == Some("4318")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> Option<OtelSettings> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OtelSettings::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        assert_eq!(settings(&[("OTEL_SERVICE_NAME", "x")]), None);
        assert_eq!(settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), None);
    }

    #[test]
    fn an_endpoint_exports_every_signal_over_grpc_by_default() {
        let on = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317")]).unwrap();
        assert_eq!(on.protocol, Protocol::Grpc);
        assert!(on.traces && on.metrics && on.logs);
    }

    #[test]
    fn without_a_protocol_the_otlp_http_port_means_http() {
        let http = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")]).unwrap();
        assert_eq!(http.protocol, Protocol::HttpProtobuf);
        let path = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/otlp")]).unwrap();
        assert_eq!(path.protocol, Protocol::HttpProtobuf);
        let forced = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap();
        assert_eq!(forced.protocol, Protocol::Grpc);
        let grpc = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:14318")]).unwrap();
        assert_eq!(grpc.protocol, Protocol::Grpc);
    }

    #[test]
    fn signals_can_be_turned_off_one_by_one_or_all_at_once() {
        let some = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_LOGS_EXPORTER", "none"),
        ])
        .unwrap();
        assert_eq!(some.protocol, Protocol::HttpProtobuf);
        assert!(some.traces && some.metrics && !some.logs);
        let disabled = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_SDK_DISABLED", "true"),
        ]);
        assert_eq!(disabled, None);
    }
}
