//! Which server frame types must never be dropped (`reliability.never_dropped` of the contract),
//! and which live-only frames may be coalesced to the latest under backpressure
//! (`reliability.coalescable_under_backpressure`).

use serde::Deserialize;

/// Exact type names that are never dropped.
const NEVER_DROPPED_TYPES: &[&str] = &[
    "message",
    "message.stop",
    "tool.end",
    "notification",
    "agent.busy",
    "agent.idle",
    "history",
    "commands.catalog",
    "commands.complete",
    "search.results",
    "error",
];

/// Type-name prefixes whose every type is never dropped (`picker.*`, `channel.*`).
const NEVER_DROPPED_PREFIXES: &[&str] = &["picker.", "channel."];

/// True when frames of `type_name` must be delivered (or outboxed) even under backpressure.
///
/// Everything else (streaming deltas, typing, pongs, ...) may be dropped or coalesced.
pub fn is_never_dropped_type(type_name: &str) -> bool {
    NEVER_DROPPED_TYPES.contains(&type_name)
        || NEVER_DROPPED_PREFIXES
            .iter()
            .any(|prefix| type_name.starts_with(prefix))
}

/// What a coalescable frame streams: a message's text or one tool call of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StreamKey {
    /// `message.update` frames of one message (ended by its `message.stop`).
    Message {
        /// The message's id.
        message_id: String,
    },
    /// `tool.progress` frames of one tool call (ended by its `tool.end`).
    Tool {
        /// Chat of the turn.
        chat_id: String,
        /// Thread of the turn, if any.
        thread_id: Option<String>,
        /// Position of the call within the turn.
        index: u64,
    },
}

/// How a server frame may be treated when its device cannot keep up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackpressureRole {
    /// Only the newest frame with this key matters (it carries the full current state).
    Coalescable(StreamKey),
    /// The final frame of what this key streamed: older coalescable frames are stale.
    Ends(StreamKey),
    /// Neither.
    Other,
}

#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type")]
    type_name: String,
    #[serde(default)]
    chat_id: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    payload: Option<PeekPayload>,
}

#[derive(Deserialize)]
struct PeekPayload {
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    index: Option<u64>,
}

/// The backpressure role of a server frame given as JSON. Only called on the slow path
/// (a device that fell behind), so it may parse.
pub fn backpressure_role(frame_json: &str) -> BackpressureRole {
    let Ok(peek) = serde_json::from_str::<Peek>(frame_json) else {
        return BackpressureRole::Other;
    };
    let payload = peek.payload.unwrap_or(PeekPayload {
        message_id: None,
        index: None,
    });
    let message = || {
        payload
            .message_id
            .clone()
            .map(|message_id| StreamKey::Message { message_id })
    };
    let tool = || {
        Some(StreamKey::Tool {
            chat_id: peek.chat_id.clone()?,
            thread_id: peek.thread_id.clone(),
            index: payload.index?,
        })
    };
    let role = match peek.type_name.as_str() {
        "message.update" => message().map(BackpressureRole::Coalescable),
        "message.stop" => message().map(BackpressureRole::Ends),
        "tool.progress" => tool().map(BackpressureRole::Coalescable),
        "tool.end" => tool().map(BackpressureRole::Ends),
        _ => None,
    };
    role.unwrap_or(BackpressureRole::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_coalesce_per_message_and_the_stop_ends_them() {
        let update = r#"{"v":1,"type":"message.update","chat_id":"android:default","payload":{"message_id":"m1","text":"ab"}}"#;
        let stop = r#"{"v":1,"type":"message.stop","chat_id":"android:default","payload":{"message_id":"m1"}}"#;
        let key = StreamKey::Message {
            message_id: "m1".into(),
        };
        assert_eq!(
            backpressure_role(update),
            BackpressureRole::Coalescable(key.clone())
        );
        assert_eq!(backpressure_role(stop), BackpressureRole::Ends(key));
    }

    #[test]
    fn tool_progress_coalesces_per_call_of_a_chat() {
        let progress =
            r#"{"v":1,"type":"tool.progress","chat_id":"c","payload":{"index":2,"note":"x"}}"#;
        let end = r#"{"v":1,"type":"tool.end","chat_id":"c","payload":{"index":2}}"#;
        let key = StreamKey::Tool {
            chat_id: "c".into(),
            thread_id: None,
            index: 2,
        };
        assert_eq!(
            backpressure_role(progress),
            BackpressureRole::Coalescable(key.clone())
        );
        assert_eq!(backpressure_role(end), BackpressureRole::Ends(key));
    }

    #[test]
    fn other_frames_and_junk_have_no_role() {
        assert_eq!(
            backpressure_role(r#"{"v":1,"type":"agent.idle","payload":{}}"#),
            BackpressureRole::Other
        );
        assert_eq!(backpressure_role("not json"), BackpressureRole::Other);
        assert_eq!(
            backpressure_role(r#"{"v":1,"type":"message.update","payload":{}}"#),
            BackpressureRole::Other
        );
    }

    #[test]
    fn prefixes_cover_every_picker_and_channel_type() {
        assert!(is_never_dropped_type("picker.model"));
        assert!(is_never_dropped_type("channel.created"));
    }

    #[test]
    fn streaming_deltas_may_be_dropped() {
        assert!(!is_never_dropped_type("message.update"));
        assert!(!is_never_dropped_type("tool.progress"));
        assert!(!is_never_dropped_type("messages"));
    }
}
