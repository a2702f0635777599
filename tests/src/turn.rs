//! What one complete streamed agent turn looks like to a device: the user's `message`,
//! `agent.busy`, `message.start`, two or more `message.update`, `message.stop` and
//! `agent.idle`, in that order, with `seq` exactly on the never-dropped frames.

use serde_json::Value;

use crate::frames::{id_of, payload_str, seq_of, type_of};

/// Types of a turn's frames that are outboxed (carry a seq), in the order they come.
pub const OUTBOXED_TURN_TYPES: [&str; 4] = ["message", "agent.busy", "message.stop", "agent.idle"];
/// Types of a turn's frames that are live only (never carry a seq).
pub const LIVE_ONLY_TURN_TYPES: [&str; 2] = ["message.start", "message.update"];

/// Whether `frame` is the user's `message` with exactly `text`.
pub fn is_user_message(frame: &Value, text: &str) -> bool {
    type_of(frame) == "message"
        && payload_str(frame, "role") == Some("user")
        && payload_str(frame, "text") == Some(text)
}

/// Whether `frame` is a `message.stop` whose final text contains `text`.
pub fn is_stop_answering(frame: &Value, text: &str) -> bool {
    type_of(frame) == "message.stop"
        && payload_str(frame, "final_text").is_some_and(|final_text| final_text.contains(text))
}

/// Asserts that `frames` (as one device received them) hold the whole streamed turn
/// answering `text`; `request_id` is the id the user's `message` must carry (`Some` on the
/// sending device, `None` on the others).
pub fn assert_whole_streamed_turn(
    device: &str,
    frames: &[Value],
    text: &str,
    request_id: Option<u64>,
) {
    let shown = || format!("[{device}] frames: {frames:#?}");
    let turn: Vec<&Value> = frames
        .iter()
        .filter(|frame| {
            let kind = type_of(frame);
            OUTBOXED_TURN_TYPES.contains(&kind) || LIVE_ONLY_TURN_TYPES.contains(&kind)
        })
        .collect();
    let kinds: Vec<&str> = turn.iter().map(|frame| type_of(frame)).collect();
    let updates = kinds
        .iter()
        .filter(|kind| **kind == "message.update")
        .count();
    let mut expected = vec!["message", "agent.busy", "message.start"];
    expected.extend(std::iter::repeat_n("message.update", updates));
    expected.extend(["message.stop", "agent.idle"]);
    assert_eq!(kinds, expected, "turn frames out of shape; {}", shown());
    assert!(updates >= 2, "fewer than two message.update; {}", shown());

    assert!(
        is_user_message(turn[0], text),
        "first frame is not the user's message; {}",
        shown()
    );
    assert_eq!(
        id_of(turn[0]),
        request_id,
        "user message carries the wrong id; {}",
        shown()
    );
    let stop = turn[turn.len() - 2];
    assert!(
        is_stop_answering(stop, text),
        "message.stop does not contain {text:?}; {}",
        shown()
    );

    for frame in &turn {
        let outboxed = OUTBOXED_TURN_TYPES.contains(&type_of(frame));
        assert_eq!(
            seq_of(frame).is_some(),
            outboxed,
            "{} must {}carry a seq: {frame}; {}",
            type_of(frame),
            if outboxed { "" } else { "not " },
            shown()
        );
    }
    let streamed_ids: Vec<Option<&str>> = turn
        .iter()
        .filter(|frame| type_of(frame).starts_with("message."))
        .map(|frame| payload_str(frame, "message_id"))
        .collect();
    assert!(
        streamed_ids.windows(2).all(|pair| pair[0] == pair[1]),
        "message.start/update/stop name different message_ids; {}",
        shown()
    );
}
