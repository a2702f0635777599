//! Hermes' `event: hermes.tool.progress` frames, which its `/v1/chat/completions` stream
//! interleaves with the chunks, as tool events.
//!
//! Observed with Hermes 0.19: `{"tool": "terminal", "emoji": "💻", "label": "ls /tmp",
//! "toolCallId": "call_0014", "status": "running"}`, then the same tool with
//! `"status": "completed"`.

use serde::Deserialize;

use crate::agent::AgentEvent;

/// Name of the SSE event Hermes sends tool progress under.
pub(super) const TOOL_PROGRESS_EVENT: &str = "hermes.tool.progress";

#[derive(Deserialize)]
struct ToolProgress {
    /// Hermes 0.19 says `tool`; other builds say `name`.
    #[serde(alias = "name")]
    tool: Option<String>,
    label: Option<String>,
    status: Option<String>,
}

/// The tool event in the `data` of one `hermes.tool.progress` frame, if it is readable.
pub(super) fn tool_event(data: &str) -> Option<AgentEvent> {
    let progress: ToolProgress = match serde_json::from_str(data) {
        Ok(progress) => progress,
        Err(err) => {
            tracing::warn!(%err, data, "skipping an unreadable Hermes tool progress frame");
            return None;
        }
    };
    let name = progress.tool.unwrap_or_else(|| "tool".to_owned());
    let status = progress.status.unwrap_or_else(|| "running".to_owned());
    let completed = |ok| AgentEvent::ToolCompleted {
        name: name.clone(),
        duration_secs: None,
        ok,
        output_preview: None,
    };
    Some(match status.as_str() {
        "running" | "started" => AgentEvent::ToolStarted {
            name: name.clone(),
            preview: progress.label,
            args: None,
        },
        "completed" | "done" => completed(true),
        "failed" | "error" => completed(false),
        _ => AgentEvent::ToolProgress {
            name: name.clone(),
            note: progress.label.unwrap_or(status),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_tool_starts_with_its_label_as_preview() {
        let data = r#"{"tool": "terminal", "emoji": "\ud83d\udcbb", "label": "ls /tmp", "toolCallId": "call_0014", "status": "running"}"#;
        assert_eq!(
            tool_event(data),
            Some(AgentEvent::ToolStarted {
                name: "terminal".into(),
                preview: Some("ls /tmp".into()),
                args: None,
            })
        );
    }

    #[test]
    fn completed_and_failed_tools_complete_with_their_outcome() {
        for (status, ok) in [("completed", true), ("failed", false)] {
            let data = format!(r#"{{"tool": "terminal", "status": "{status}"}}"#);
            assert_eq!(
                tool_event(&data),
                Some(AgentEvent::ToolCompleted {
                    name: "terminal".into(),
                    duration_secs: None,
                    ok,
                    output_preview: None,
                })
            );
        }
    }

    #[test]
    fn other_statuses_are_progress_notes() {
        let data = r#"{"name": "web_search", "status": "executing"}"#;
        assert_eq!(
            tool_event(data),
            Some(AgentEvent::ToolProgress {
                name: "web_search".into(),
                note: "executing".into(),
            })
        );
    }
}
