//! The built-in echo agent: answers a text T by streaming "echo: T" in chunks, so the
//! whole cluster can be tried and tested without an LLM. A text starting with
//! [`FAIL_PREFIX`] makes the turn fail the way an upstream failure does, so the app's
//! error path can be tried too.

use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};

use super::{Agent, AgentEvent, TurnInput};

/// Model name the echo agent reports.
pub const ECHO_MODEL: &str = "echo";
/// Texts starting with this make the echo agent fail after its first chunk.
pub const FAIL_PREFIX: &str = "!fail";
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

impl Agent for EchoAgent {
    fn run(&self, input: TurnInput) -> BoxStream<'static, AgentEvent> {
        let delay = self.delay;
        let deltas = chunks(&format!("echo: {}", input.text));
        if let Some(reason) = input.text.strip_prefix(FAIL_PREFIX) {
            let first = deltas.into_iter().take(1).map(AgentEvent::TextDelta);
            let failure = AgentEvent::Failed(format!("echo failure requested:{reason}"));
            return stream::iter(first.chain(std::iter::once(failure))).boxed();
        }
        let tokens = deltas.len() as u64;
        stream::iter(deltas)
            .then(move |delta| async move {
                tokio::time::sleep(delay).await;
                AgentEvent::TextDelta(delta)
            })
            .chain(stream::once(async move {
                AgentEvent::Done {
                    model: Some(ECHO_MODEL.to_owned()),
                    tokens: Some(tokens),
                }
            }))
            .boxed()
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
        let input = TurnInput { text: "hi".into() };
        let events: Vec<_> = agent.run(input).collect().await;
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
        };
        let events: Vec<_> = agent.run(input).collect().await;
        assert!(matches!(events.last(), Some(AgentEvent::Failed(_))));
    }
}
