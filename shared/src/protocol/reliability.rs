//! Which server frame types must never be dropped (`reliability.never_dropped` of the contract).

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

#[cfg(test)]
mod tests {
    use super::*;

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
