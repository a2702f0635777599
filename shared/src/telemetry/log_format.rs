//! Log lines that name their trace. Text lines (`IRIS_LOG_FORMAT=text`) are the standard
//! format followed by `trace_id=…`; JSON lines (`json`, one object per line for log
//! pipelines) are tracing-subscriber's JSON with `trace_id` and `span_id` added. Either is
//! added when the event happens inside a span of an exported trace, so a line found in the
//! logs leads to its trace (and a trace to its lines).

use std::fmt;

use opentelemetry::trace::TraceContextExt;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{DefaultFields, Format, Json, JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The default event format plus the trace id.
#[derive(Debug, Default)]
pub struct WithTraceId {
    inner: Format,
}

impl<S> FormatEvent<S, DefaultFields> for WithTraceId
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, DefaultFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let trace_id = super::enabled().then(|| current_ids(ctx)).flatten();
        let Some((trace_id, _)) = trace_id else {
            return self.inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.inner
            .format_event(ctx, Writer::new(&mut line), event)?;
        let line = line.trim_end_matches('\n');
        writeln!(writer, "{line} trace_id={trace_id}")
    }
}

/// The JSON format plus `trace_id` and `span_id`.
#[derive(Debug)]
pub struct JsonWithTraceId {
    inner: Format<Json>,
}

impl Default for JsonWithTraceId {
    fn default() -> Self {
        Self {
            inner: tracing_subscriber::fmt::format()
                .json()
                .with_current_span(true)
                .with_span_list(true),
        }
    }
}

impl<S> FormatEvent<S, JsonFields> for JsonWithTraceId
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let ids = super::enabled().then(|| current_ids(ctx)).flatten();
        let Some((trace_id, span_id)) = ids else {
            return self.inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.inner
            .format_event(ctx, Writer::new(&mut line), event)?;
        // Logs are far rarer than frames: parsing the line back costs nothing that matters.
        match serde_json::from_str(line.trim_end()) {
            Ok(serde_json::Value::Object(mut object)) => {
                object.insert("trace_id".into(), trace_id.into());
                object.insert("span_id".into(), span_id.into());
                writeln!(writer, "{}", serde_json::Value::Object(object))
            }
            _ => writer.write_str(&line),
        }
    }
}

/// Trace and span id (hex) of the span the event is in, if it is valid.
fn current_ids<S, N>(ctx: &FmtContext<'_, S, N>) -> Option<(String, String)>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
{
    let span = ctx.lookup_current()?;
    let id = span.id();
    tracing::dispatcher::get_default(|dispatch| {
        let cx = tracing_opentelemetry::get_otel_context(&id, dispatch)?;
        let span_context = cx.span().span_context().clone();
        span_context.is_valid().then(|| {
            (
                span_context.trace_id().to_string(),
                span_context.span_id().to_string(),
            )
        })
    })
}
