//! Trace context across processes, in W3C `traceparent` form: written into Redis stream
//! entries by whoever appends work or frames, and read back by whoever takes them, so the
//! spans of a gateway, a worker and the upstream agent join one trace. Also the header the
//! worker sends to the upstream agent.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Name of the header (and of the context's field) that carries it.
pub const TRACEPARENT: &str = "traceparent";

/// A span named `$name` with the given fields when spans are exported, else a disabled
/// span that costs nothing.
#[macro_export]
macro_rules! traced_span {
    ($name:literal $(, $($fields:tt)*)?) => {
        if $crate::telemetry::enabled() {
            tracing::info_span!($name $(, $($fields)*)?)
        } else {
            tracing::Span::none()
        }
    };
}

/// The `traceparent` of `span`, when it belongs to an exported trace.
pub fn traceparent_of(span: &Span) -> Option<String> {
    if !super::enabled() || span.is_disabled() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
    carrier.remove(TRACEPARENT)
}

/// The `traceparent` of the current span.
pub fn current_traceparent() -> Option<String> {
    traceparent_of(&Span::current())
}

/// Makes `span` a child of the remote span `traceparent` names (a no-op for `None`, a
/// malformed value, or a disabled span).
pub fn continue_trace(span: &Span, traceparent: Option<&str>) {
    let Some(traceparent) = traceparent.filter(|_| !span.is_disabled()) else {
        return;
    };
    let carrier = HashMap::from([(TRACEPARENT.to_owned(), traceparent.to_owned())]);
    let parent = TraceContextPropagator::new().extract(&carrier);
    let _ = span.set_parent(parent);
}

/// Headers that carry the current span to an HTTP upstream (empty when not tracing).
pub fn current_headers() -> Vec<(&'static str, String)> {
    current_traceparent()
        .map(|value| vec![(TRACEPARENT, value)])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_carried_while_spans_are_not_exported() {
        assert_eq!(traceparent_of(&Span::none()), None);
        assert!(current_headers().is_empty());
        continue_trace(
            &Span::none(),
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        );
    }
}
