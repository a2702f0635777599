//! The built-in echo agent: answers a text T by streaming "echo: T" in chunks, so the
//! whole cluster can be tried and tested without an LLM. A text starting with
//! [`FAIL_PREFIX`] makes the turn fail the way an upstream failure does, so the app's
//! error path can be tried too. A text starting with [`TOOL_PREFIX`] makes it run a pretend
//! tool (named `echo`) before answering, so the tool path (and what a stopped worker does
//! to a turn whose tools began) can be tried too. Media attached to the message comes back
//! as the agent's own media, so the whole media path can be tried without an LLM as well.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{self, BoxFuture, FutureExt};
use futures_util::stream::{self, StreamExt};
use tokio::sync::watch;

use super::{Agent, AgentCaps, AgentError, AgentEvent, AgentRun, ModelInfo, RunControl, TurnInput};

/// Model name the echo agent reports.
pub const ECHO_MODEL: &str = "echo";
/// Texts starting with this make the echo agent fail after its first chunk.
pub const FAIL_PREFIX: &str = "!fail";
/// Texts starting with this make the echo agent run its pretend tool first.
pub const TOOL_PREFIX: &str = "!tool";
/// Fewest chunks an answer is streamed in, so every answer has several updates.
const MIN_CHUNKS: usize = 3;
/// Most characters per chunk.
const MAX_CHUNK_CHARS: usize = 24;

/// Streams the user's text back.
#[derive(Debug, Clone)]
pub struct EchoAgent {
    /// Pause before each chunk.
    pub delay: Duration,
}

/// Splits `answer` into at least [`MIN_CHUNKS`] non-empty pieces (fewer only if it is
/// shorter than that), each at most [`MAX_CHUNK_CHARS`] characters, on char boundaries.
fn chunks(answer: &str) -> Vec<String> {
    let chars: Vec<char> = answer.chars().collect();
    let size = chars.len().div_ceil(MIN_CHUNKS).clamp(1, MAX_CHUNK_CHARS);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Stops an echo turn: the stream ends with `Cancelled` before its next chunk.
struct EchoControl {
    stopped: watch::Sender<bool>,
}

impl RunControl for EchoControl {
    fn stop(&self) -> BoxFuture<'static, Result<(), AgentError>> {
        self.stopped.send_replace(true);
        future::ready(Ok(())).boxed()
    }

    fn approve(
        &self,
        _approval_id: &str,
        _choice: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        future::ready(Err(AgentError::NotActive(
            "the echo agent asks for no approvals".into(),
        )))
        .boxed()
    }

    fn steer(&self, _text: &str) -> BoxFuture<'static, Result<(), AgentError>> {
        future::ready(Err(AgentError::Unsupported(
            "the echo agent cannot be steered".into(),
        )))
        .boxed()
    }
}

impl Agent for EchoAgent {
    fn start(&self, input: TurnInput) -> AgentRun {
        let (stopped, stop_seen) = watch::channel(false);
        let control = Arc::new(EchoControl { stopped });
        let delay = self.delay;
        let deltas = chunks(&format!("echo: {}", input.text));
        let ending = match input.text.strip_prefix(FAIL_PREFIX) {
            Some(reason) => AgentEvent::Failed(format!("echo failure requested:{reason}")),
            None => AgentEvent::Done {
                model: Some(ECHO_MODEL.to_owned()),
                tokens: Some(deltas.len() as u64),
            },
        };
        let tool = input.text.starts_with(TOOL_PREFIX).then(|| {
            let preview = Some(input.text.clone());
            [
                AgentEvent::ToolStarted {
                    name: "echo".to_owned(),
                    preview: preview.clone(),
                    args: None,
                },
                AgentEvent::ToolCompleted {
                    name: "echo".to_owned(),
                    duration_secs: Some(delay.as_secs_f64()),
                    ok: true,
                    output_preview: preview,
                },
            ]
        });
        let deltas: Vec<AgentEvent> = match ending {
            AgentEvent::Failed(_) => deltas
                .into_iter()
                .take(1)
                .map(AgentEvent::TextDelta)
                .collect(),
            _ => deltas
                .into_iter()
                .map(AgentEvent::TextDelta)
                .chain(
                    input
                        .media_ids
                        .iter()
                        .map(|media_id| AgentEvent::MediaProduced {
                            media_id: media_id.clone(),
                        }),
                )
                .collect(),
        };
        let deltas: Vec<AgentEvent> = tool.into_iter().flatten().chain(deltas).collect();
        let events = stream::unfold(
            (deltas.into_iter(), Some(ending)),
            move |(mut deltas, ending)| {
                let mut stop_seen = stop_seen.clone();
                async move {
                    let ending = ending?;
                    // No pause at all without a delay: a timer of zero still waits for the
                    // timer's next millisecond tick.
                    let stopped = if delay.is_zero() {
                        *stop_seen.borrow()
                    } else {
                        let stop_came = tokio::select! {
                            _ = tokio::time::sleep(delay) => false,
                            _ = stop_seen.wait_for(|stopped| *stopped) => true,
                        };
                        stop_came || *stop_seen.borrow()
                    };
                    if stopped {
                        return Some((AgentEvent::Cancelled, (deltas, None)));
                    }
                    match deltas.next() {
                        Some(event) => Some((event, (deltas, Some(ending)))),
                        None => Some((ending, (deltas, None))),
                    }
                }
            },
        )
        .boxed();
        AgentRun { events, control }
    }

    fn models(&self) -> BoxFuture<'static, Result<Vec<ModelInfo>, AgentError>> {
        let echo = ModelInfo {
            id: ECHO_MODEL.to_owned(),
            label: "Echo (built in)".to_owned(),
        };
        future::ready(Ok(vec![echo])).boxed()
    }

    fn caps(&self) -> AgentCaps {
        AgentCaps::default()
    }

    fn default_model(&self) -> Option<String> {
        Some(ECHO_MODEL.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_split_into_several_chunks_that_join_back() {
        let answer = "echo: hello there";
        let parts = chunks(answer);
        assert!(parts.len() >= MIN_CHUNKS);
        assert_eq!(parts.concat(), answer);
    }

    #[test]
    fn long_answers_use_bounded_chunks() {
        let answer = "x".repeat(1000);
        assert!(chunks(&answer)
            .iter()
            .all(|c| c.chars().count() <= MAX_CHUNK_CHARS));
    }

    #[test]
    fn multibyte_text_splits_on_char_boundaries() {
        assert_eq!(chunks("échö ✓ 日本").concat(), "échö ✓ 日本");
    }

    #[tokio::test]
    async fn the_stream_ends_with_done_after_the_text() {
        let agent = EchoAgent {
            delay: Duration::ZERO,
        };
        let input = TurnInput {
            text: "hi".into(),
            ..Default::default()
        };
        let events: Vec<_> = agent.start(input).events.collect().await;
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "echo: hi");
        assert!(matches!(events.last(), Some(AgentEvent::Done { .. })));
    }

    #[tokio::test]
    async fn a_fail_request_ends_the_stream_with_a_failure() {
        let agent = EchoAgent {
            delay: Duration::ZERO,
        };
        let input = TurnInput {
            text: "!fail boom".into(),
            ..Default::default()
        };
        let events: Vec<_> = agent.start(input).events.collect().await;
        assert!(matches!(events.last(), Some(AgentEvent::Failed(_))));
    }

    #[tokio::test]
    async fn a_tool_request_runs_the_pretend_tool_before_the_text() {
        let agent = EchoAgent {
            delay: Duration::ZERO,
        };
        let input = TurnInput {
            text: "!tool ls".into(),
            ..Default::default()
        };
        let events: Vec<_> = agent.start(input).events.collect().await;
        assert!(matches!(&events[0], AgentEvent::ToolStarted { name, .. } if name == "echo"));
        assert!(matches!(
            &events[1],
            AgentEvent::ToolCompleted { ok: true, .. }
        ));
        assert!(matches!(&events[2], AgentEvent::TextDelta(_)));
        assert!(matches!(events.last(), Some(AgentEvent::Done { .. })));
    }

    #[tokio::test]
    async fn a_stopped_turn_ends_with_cancelled_before_its_text_is_done() {
        let agent = EchoAgent {
            delay: Duration::from_millis(50),
        };
        let input = TurnInput {
            text: "a long text that would take a while to stream back".into(),
            ..Default::default()
        };
        let run = agent.start(input);
        let mut events = run.events;
        assert!(matches!(
            events.next().await,
            Some(AgentEvent::TextDelta(_))
        ));
        run.control.stop().await.unwrap();
        let rest: Vec<_> = events.collect().await;
        assert_eq!(rest, vec![AgentEvent::Cancelled]);
    }
}
