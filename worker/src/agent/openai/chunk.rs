//! One `chat.completion.chunk` of the stream: its deltas as agent events, and what it tells
//! about the whole turn (model, token usage, finish reason).

use serde::Deserialize;

use super::upstream_error::error_message;
use crate::agent::AgentEvent;

/// What the chunks so far said about the turn, for its `Done` event.
#[derive(Debug, Default)]
pub(super) struct TurnSummary {
    /// Model that answered, as the latest chunk names it.
    pub model: Option<String>,
    /// Total tokens, from the usage chunk.
    pub tokens: Option<u64>,
    /// Why the answer ended (`stop`, `length`, `tool_calls`, ...), once a chunk said so.
    pub finish_reason: Option<String>,
}

/// What one chunk means for the run.
#[derive(Debug, PartialEq)]
pub(super) enum ChunkOutcome {
    /// More of the answer (possibly nothing: role-only, tool-call and usage chunks).
    Events(Vec<AgentEvent>),
    /// The upstream reported an error inside the stream.
    Failed(String),
}

#[derive(Deserialize)]
struct Chunk {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

/// The parts of a delta shown to people; `tool_calls` are left out on purpose: this
/// endpoint cannot run tools, and agents behind it that do report them separately.
#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    /// What some servers (OpenRouter, vLLM) call `reasoning_content`.
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    total_tokens: Option<u64>,
}

/// Reads the `data` of one chunk, noting what it says about the turn in `summary`.
pub(super) fn read_chunk(data: &str, summary: &mut TurnSummary) -> ChunkOutcome {
    let value: serde_json::Value = match serde_json::from_str(data) {
        Ok(value) => value,
        Err(err) => {
            // One unreadable chunk should not lose the rest of the answer.
            tracing::warn!(%err, data, "skipping an unreadable chunk from the agent upstream");
            return ChunkOutcome::Events(Vec::new());
        }
    };
    if let Some(message) = error_message(&value) {
        return ChunkOutcome::Failed(format!("the agent upstream failed: {message}"));
    }
    let chunk: Chunk = match serde_json::from_value(value) {
        Ok(chunk) => chunk,
        Err(err) => {
            tracing::warn!(%err, data, "skipping a chunk of unexpected shape from the agent upstream");
            return ChunkOutcome::Events(Vec::new());
        }
    };
    if let Some(model) = chunk.model.filter(|model| !model.is_empty()) {
        summary.model = Some(model);
    }
    if let Some(tokens) = chunk.usage.and_then(|usage| usage.total_tokens) {
        summary.tokens = Some(tokens);
    }
    let mut events = Vec::new();
    // Only the first choice: the request never asks for more than one (`n` is left out).
    if let Some(choice) = chunk.choices.into_iter().next() {
        if let Some(delta) = choice.delta {
            if let Some(reasoning) = delta.reasoning_content.or(delta.reasoning) {
                events.push(AgentEvent::ReasoningDelta(reasoning));
            }
            if let Some(content) = delta.content {
                events.push(AgentEvent::TextDelta(content));
            }
        }
        if choice.finish_reason.is_some() {
            summary.finish_reason = choice.finish_reason;
        }
    }
    events.retain(|event| match event {
        AgentEvent::TextDelta(text) | AgentEvent::ReasoningDelta(text) => !text.is_empty(),
        _ => true,
    });
    ChunkOutcome::Events(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &str) -> (ChunkOutcome, TurnSummary) {
        let mut summary = TurnSummary::default();
        (read_chunk(data, &mut summary), summary)
    }

    #[test]
    fn reasoning_under_either_name_becomes_a_reasoning_delta() {
        for data in [
            r#"{"choices": [{"index": 0, "delta": {"reasoning_content": "Hm."}}]}"#,
            r#"{"choices": [{"index": 0, "delta": {"reasoning": "Hm."}}]}"#,
        ] {
            let (outcome, _) = read(data);
            let expected = vec![AgentEvent::ReasoningDelta("Hm.".into())];
            assert_eq!(outcome, ChunkOutcome::Events(expected), "{data}");
        }
    }

    #[test]
    fn role_only_and_empty_content_chunks_yield_nothing() {
        let data = r#"{"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}"#;
        assert_eq!(read(data).0, ChunkOutcome::Events(Vec::new()));
    }

    #[test]
    fn a_usage_chunk_without_choices_records_tokens_and_model() {
        let data = r#"{"model": "fake-model", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}"#;
        let (outcome, summary) = read(data);
        assert_eq!(outcome, ChunkOutcome::Events(Vec::new()));
        assert_eq!(summary.tokens, Some(110));
        assert_eq!(summary.model.as_deref(), Some("fake-model"));
    }

    #[test]
    fn tool_call_deltas_are_ignored_but_their_finish_reason_is_kept() {
        let data = r#"{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}"#;
        let (outcome, summary) = read(data);
        assert_eq!(outcome, ChunkOutcome::Events(Vec::new()));
        assert_eq!(summary.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn an_error_object_in_the_stream_is_a_failure() {
        let data = r#"{"error": {"message": "upstream overloaded", "type": "server_error"}}"#;
        assert_eq!(
            read(data).0,
            ChunkOutcome::Failed("the agent upstream failed: upstream overloaded".into())
        );
    }

    #[test]
    fn unreadable_chunks_are_skipped() {
        assert_eq!(read("{not json").0, ChunkOutcome::Events(Vec::new()));
    }
}
