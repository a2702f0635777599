//! Log lines that name their trace: the standard format, followed by `trace_id=…` when the
//! event happens inside a span that belongs to an exported trace, so a line found in the
//! logs leads to its trace (and a trace to its lines).

use std::fmt;

use opentelemetry::trace::TraceContextExt;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{DefaultFields, Format, Writer};
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
        let trace_id = super::enabled().then(|| current_trace_id(ctx)).flatten();
        let Some(trace_id) = trace_id else {
            return self.inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.inner
            .format_event(ctx, Writer::new(&mut line), event)?;
        let line = line.trim_end_matches('\n');
        writeln!(writer, "{line} trace_id={trace_id}")
    }
}

/// Trace id of the span the event is in, if it is valid.
fn current_trace_id<S>(ctx: &FmtContext<'_, S, DefaultFields>) -> Option<String>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    DefaultFields: for<'w> FormatFields<'w>,
{
    let span = ctx.lookup_current()?;
    let id = span.id();
    tracing::dispatcher::get_default(|dispatch| {
        let cx = tracing_opentelemetry::get_otel_context(&id, dispatch)?;
        let span_context = cx.span().span_context().clone();
        span_context
            .is_valid()
            .then(|| span_context.trace_id().to_string())
    })
}
