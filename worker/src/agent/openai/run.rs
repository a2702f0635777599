//! One streamed turn: sends the request, turns the server-sent events into agent events,
//! and ends with exactly one of `Done`, `Failed` or `Cancelled` — also when the upstream
//! errs, drops the connection, falls silent, or the run is stopped.
//!
//! Nothing is spawned: the request advances only while the events are polled, and dropping
//! the events (or stopping) drops the response, which closes the connection.

use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::RequestBuilder;
use tokio::sync::watch;

use super::chunk::{read_chunk, ChunkOutcome, TurnSummary};
use super::hermes_progress::{tool_event, TOOL_PROGRESS_EVENT};
use super::upstream_error::{http_failure, transport_failure, with_causes};
use crate::agent::AgentEvent;

/// The `data` that ends an OpenAI stream.
const DONE_MARKER: &str = "[DONE]";
/// The event name of unnamed SSE events (the chunks).
const UNNAMED_EVENT: &str = "message";

type SseItem = Result<Event, EventStreamError<reqwest::Error>>;

/// Where a run is.
enum Phase {
    /// The request is not sent yet.
    Unsent(Box<RequestBuilder>),
    /// The answer is streaming in.
    Streaming(BoxStream<'static, SseItem>),
    /// The terminal event was produced.
    Over,
}

/// A run's progress and what it learned so far.
struct Run {
    phase: Phase,
    summary: TurnSummary,
    /// Reported in `Done` when no chunk names the model.
    requested_model: Option<String>,
    /// For the message when the upstream falls silent.
    idle_timeout: Duration,
}

/// The events of the turn that `request` starts; it ends with `Cancelled` once `stopped`
/// turns true (unless it ended first).
pub(super) fn run_events(
    request: RequestBuilder,
    requested_model: Option<String>,
    idle_timeout: Duration,
    stopped: watch::Receiver<bool>,
) -> BoxStream<'static, AgentEvent> {
    let run = Run {
        phase: Phase::Unsent(Box::new(request)),
        summary: TurnSummary::default(),
        requested_model,
        idle_timeout,
    };
    stream::unfold((run, stopped), |(mut run, mut stopped)| async move {
        if matches!(run.phase, Phase::Over) {
            return None;
        }
        // Biased towards the stop, so a run stopped before its first poll sends nothing.
        // A dropped control (Err) is no stop: the run goes on.
        let events = tokio::select! {
            biased;
            Ok(_) = stopped.wait_for(|stopped| *stopped) => run.end(AgentEvent::Cancelled),
            events = run.step() => events,
        };
        Some((stream::iter(events), (run, stopped)))
    })
    .flatten()
    .boxed()
}

impl Run {
    /// Takes the next step: sends the request or reads the next event. Returns the agent
    /// events it produced, possibly none.
    async fn step(&mut self) -> Vec<AgentEvent> {
        match std::mem::replace(&mut self.phase, Phase::Over) {
            Phase::Unsent(request) => self.send(*request).await,
            Phase::Streaming(mut sse) => {
                let item = sse.next().await;
                self.phase = Phase::Streaming(sse);
                self.read(item)
            }
            Phase::Over => Vec::new(),
        }
    }

    async fn send(&mut self, request: RequestBuilder) -> Vec<AgentEvent> {
        let response = match request.send().await {
            Ok(response) => response,
            Err(err) if err.is_timeout() => {
                return self.fail(transport_failure(&err, self.idle_timeout))
            }
            Err(err) => {
                let why = with_causes(&err);
                return self.fail(format!("cannot reach the agent upstream: {why}"));
            }
        };
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            let why = http_failure(status, &body);
            return self.fail(format!("the agent upstream refused the turn: {why}"));
        }
        self.phase = Phase::Streaming(response.bytes_stream().eventsource().boxed());
        Vec::new()
    }

    /// Reads one item of the event stream (`None`: the stream ended).
    fn read(&mut self, item: Option<SseItem>) -> Vec<AgentEvent> {
        let event = match item {
            Some(Ok(event)) => event,
            Some(Err(EventStreamError::Transport(err))) => {
                return self.fail(transport_failure(&err, self.idle_timeout))
            }
            Some(Err(err)) => {
                return self.fail(format!(
                    "the agent upstream sent a broken event stream: {err}"
                ))
            }
            // Some servers close without `[DONE]`; a finish reason says the answer is whole.
            None if self.summary.finish_reason.is_some() => return self.done(),
            None => {
                return self.fail(
                    "the agent upstream closed the stream before the answer was complete".into(),
                )
            }
        };
        match event.event.as_str() {
            TOOL_PROGRESS_EVENT => tool_event(&event.data).into_iter().collect(),
            UNNAMED_EVENT if event.data.trim() == DONE_MARKER => self.done(),
            UNNAMED_EVENT => match read_chunk(&event.data, &mut self.summary) {
                ChunkOutcome::Events(events) => events,
                ChunkOutcome::Failed(why) => self.fail(why),
            },
            // Other named events (e.g. Hermes' status frames) carry nothing to show.
            _ => Vec::new(),
        }
    }

    fn done(&mut self) -> Vec<AgentEvent> {
        tracing::debug!(finish_reason = ?self.summary.finish_reason, "agent upstream answered");
        let model = self
            .summary
            .model
            .take()
            .or_else(|| self.requested_model.take());
        let tokens = self.summary.tokens;
        self.end(AgentEvent::Done { model, tokens })
    }

    fn fail(&mut self, why: String) -> Vec<AgentEvent> {
        self.end(AgentEvent::Failed(why))
    }

    /// Ends the run with `terminal`, dropping the response (and so the connection).
    fn end(&mut self, terminal: AgentEvent) -> Vec<AgentEvent> {
        self.phase = Phase::Over;
        vec![terminal]
    }
}
