//! The events of a Hermes run's SSE stream (`GET /v1/runs/{id}/events`), parsed from their
//! JSON into what the backend acts on. Hermes 0.19 sends `data: {json}` frames whose
//! `event` field names the event; an SSE `event:` line is honoured too, for other versions.

use serde_json::Value;

/// Choices Hermes 0.19 offers when an approval request lists none.
const DEFAULT_APPROVAL_CHOICES: [&str; 4] = ["once", "session", "always", "deny"];

/// One event of a run, as far as Iris cares.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RunEvent {
    /// More answer text (`message.delta`).
    TextDelta(String),
    /// A tool call began (`tool.started`; Hermes reports neither call id nor arguments).
    ToolStarted {
        tool: String,
        preview: Option<String>,
    },
    /// Progress of a tool call (`tool.progress` / `hermes.tool.progress`, not sent on runs by
    /// 0.19 but by its other streams and possibly by later versions).
    ToolProgress { tool: String, note: String },
    /// A tool call finished (`tool.completed`).
    ToolCompleted {
        tool: String,
        duration_secs: Option<f64>,
        failed: bool,
    },
    /// The run waits for a command to be approved (`approval.request`).
    ApprovalRequested {
        command: String,
        description: String,
        choices: Vec<String>,
    },
    /// The pending approval was answered (`approval.responded`).
    ApprovalResponded { choice: String },
    /// The run finished (`run.completed`).
    Completed { total_tokens: Option<u64> },
    /// The run failed (`run.failed`).
    Failed { error: String },
    /// The run was stopped (`run.cancelled`).
    Cancelled,
    /// Anything else, named for the debug log. Includes `reasoning.available`, which in 0.19
    /// carries the assistant's final content again, not its reasoning.
    Ignored(String),
}

/// Parses one SSE frame: `sse_name` is its `event:` line (`message` when absent), `data` its
/// data. `Err` describes data that is not a JSON object.
pub(super) fn parse_frame(sse_name: &str, data: &str) -> Result<RunEvent, String> {
    let payload: Value =
        serde_json::from_str(data).map_err(|err| format!("not JSON ({err}): {data:.120}"))?;
    if !payload.is_object() {
        return Err(format!("not a JSON object: {data:.120}"));
    }
    let name = text(&payload, "event").unwrap_or_else(|| sse_name.to_owned());
    Ok(parse_event(&name, &payload))
}

fn parse_event(name: &str, payload: &Value) -> RunEvent {
    match name {
        "message.delta" => RunEvent::TextDelta(text(payload, "delta").unwrap_or_default()),
        "tool.started" => RunEvent::ToolStarted {
            tool: tool_name(payload),
            preview: text(payload, "preview"),
        },
        "tool.progress" | "hermes.tool.progress" => tool_progress(name, payload),
        "tool.completed" => RunEvent::ToolCompleted {
            tool: tool_name(payload),
            duration_secs: payload.get("duration").and_then(Value::as_f64),
            failed: is_set(payload.get("error")),
        },
        "approval.request" => RunEvent::ApprovalRequested {
            command: text(payload, "command").unwrap_or_default(),
            description: text(payload, "description").unwrap_or_default(),
            choices: choices(payload),
        },
        "approval.responded" => RunEvent::ApprovalResponded {
            choice: text(payload, "choice").unwrap_or_default(),
        },
        "run.completed" => RunEvent::Completed {
            total_tokens: payload
                .pointer("/usage/total_tokens")
                .and_then(Value::as_u64),
        },
        "run.failed" => RunEvent::Failed {
            error: failure_text(payload.get("error")),
        },
        "run.cancelled" => RunEvent::Cancelled,
        other => RunEvent::Ignored(other.to_owned()),
    }
}

/// Tool progress, unless it is an internal pseudo-tool: Hermes names those with a leading
/// `_` (e.g. `_thinking`, whose "progress" is the answer text again).
fn tool_progress(name: &str, payload: &Value) -> RunEvent {
    let tool = tool_name(payload);
    let note = ["label", "message", "delta", "status"]
        .iter()
        .find_map(|key| text(payload, key));
    match note {
        Some(note) if !tool.starts_with('_') => RunEvent::ToolProgress { tool, note },
        _ => RunEvent::Ignored(name.to_owned()),
    }
}

fn tool_name(payload: &Value) -> String {
    text(payload, "tool")
        .or_else(|| text(payload, "tool_name"))
        .unwrap_or_else(|| "tool".to_owned())
}

fn choices(payload: &Value) -> Vec<String> {
    match payload.get("choices").and_then(Value::as_array) {
        Some(listed) => listed
            .iter()
            .filter_map(|choice| choice.as_str().map(str::to_owned))
            .collect(),
        None => DEFAULT_APPROVAL_CHOICES.map(str::to_owned).to_vec(),
    }
}

/// `run.failed`'s error: a string in 0.19, an OpenAI-style object possibly elsewhere.
fn failure_text(error: Option<&Value>) -> String {
    let described = match error {
        Some(Value::String(message)) => Some(message.clone()),
        Some(object @ Value::Object(_)) => text(object, "message"),
        _ => None,
    };
    described
        .filter(|message| !message.trim().is_empty())
        .unwrap_or_else(|| "Hermes reported the run failed without a reason".to_owned())
}

/// Whether an `error` field says something went wrong (`true`, or a non-empty message).
fn is_set(error: Option<&Value>) -> bool {
    match error {
        Some(Value::Bool(failed)) => *failed,
        Some(Value::String(message)) => !message.is_empty(),
        Some(Value::Null) | None => false,
        Some(_) => true,
    }
}

fn text(payload: &Value, key: &str) -> Option<String> {
    payload.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(data: &str) -> RunEvent {
        parse_frame("message", data).unwrap()
    }

    #[test]
    fn reasoning_available_is_ignored_because_it_repeats_the_answer() {
        let data = r#"{"event": "reasoning.available", "run_id": "run_1", "text": "Hello from the fake LLM!"}"#;
        assert_eq!(parse(data), RunEvent::Ignored("reasoning.available".into()));
    }

    #[test]
    fn a_recorded_approval_request_keeps_command_description_and_choices() {
        let data = r#"{"command": "rm -rf $LAB/scratch", "pattern_key": "delete in root path", "pattern_keys": ["delete in root path"], "description": "delete in root path", "allow_permanent": true, "event": "approval.request", "run_id": "run_1", "timestamp": 1.0, "choices": ["once", "session", "always", "deny"]}"#;
        assert_eq!(
            parse(data),
            RunEvent::ApprovalRequested {
                command: "rm -rf $LAB/scratch".into(),
                description: "delete in root path".into(),
                choices: vec![
                    "once".into(),
                    "session".into(),
                    "always".into(),
                    "deny".into()
                ],
            }
        );
    }

    #[test]
    fn a_failed_tool_is_told_by_its_error_flag() {
        let data =
            r#"{"event": "tool.completed", "tool": "terminal", "duration": 2.432, "error": true}"#;
        assert_eq!(
            parse(data),
            RunEvent::ToolCompleted {
                tool: "terminal".into(),
                duration_secs: Some(2.432),
                failed: true,
            }
        );
    }

    #[test]
    fn an_sse_event_line_names_the_event_when_the_json_does_not() {
        let data = r#"{"tool": "terminal", "label": "ls /tmp", "status": "running"}"#;
        assert_eq!(
            parse_frame("hermes.tool.progress", data).unwrap(),
            RunEvent::ToolProgress {
                tool: "terminal".into(),
                note: "ls /tmp".into(),
            }
        );
    }

    #[test]
    fn internal_pseudo_tool_progress_is_ignored() {
        let data = r#"{"event": "tool.progress", "tool_name": "_thinking", "delta": "Hello"}"#;
        assert_eq!(parse(data), RunEvent::Ignored("tool.progress".into()));
    }

    #[test]
    fn usage_total_tokens_are_read_from_run_completed() {
        let data = r#"{"event": "run.completed", "output": "hi", "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}"#;
        assert_eq!(
            parse(data),
            RunEvent::Completed {
                total_tokens: Some(110)
            }
        );
    }

    #[test]
    fn unknown_events_are_ignored_by_name() {
        assert_eq!(
            parse(r#"{"event": "run.queued"}"#),
            RunEvent::Ignored("run.queued".into())
        );
    }

    #[test]
    fn data_that_is_not_json_is_an_error() {
        assert!(parse_frame("message", "[DONE]").is_err());
    }
}
