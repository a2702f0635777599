//! What one complete streamed agent turn looks like to a device: the user's `message`,
//! `agent.busy`, `message.start`, two or more `message.update`, `message.stop` and
//! `agent.idle`, in that order, with `seq` exactly on the never-dropped frames. And what a
//! turn cut off by a stopped worker looks like: its start, then `error`, an empty
//! `message.stop {interrupted: true}` and `agent.idle`, each once.

use std::time::Duration;

use serde_json::Value;

use crate::client::Client;
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

/// The frames of `frames` that belong to a streamed turn, asserted to be one turn's types
/// in order (`message`, `agent.busy`, `message.start`, the updates, `message.stop`,
/// `agent.idle`) with at least `min_updates` `message.update`.
pub fn assert_turn_in_order<'a>(
    device: &str,
    frames: &'a [Value],
    min_updates: usize,
) -> Vec<&'a Value> {
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
    assert!(
        updates >= min_updates,
        "fewer than {min_updates} message.update; {}",
        shown()
    );
    turn
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
    let turn = assert_turn_in_order(device, frames, 2);

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

/// Whether `frame` is the `message.stop` of a turn cut off by a stopped worker.
pub fn is_interrupted_stop(frame: &Value) -> bool {
    type_of(frame) == "message.stop" && frame["payload"]["interrupted"] == Value::Bool(true)
}

/// Asserts that `frames` (as one device received them) hold the turn answering the
/// echo agent's `text` ended as interrupted, everything exactly once: the user's message,
/// then `error {code: internal}` naming the interruption, an empty
/// `message.stop {interrupted: true}`, and `agent.idle`, in that order; every
/// `message.update` of the answer before the stop and none after; each update's text a
/// prefix of the echo answer (never two attempts' texts mixed).
pub fn assert_interrupted_turn(device: &str, frames: &[Value], text: &str) {
    let shown = || format!("[{device}] frames: {frames:#?}");
    let position = |what: &str, found: &dyn Fn(&Value) -> bool| {
        let hits: Vec<usize> = (0..frames.len()).filter(|&i| found(&frames[i])).collect();
        assert_eq!(hits.len(), 1, "{what} not exactly once; {}", shown());
        hits[0]
    };
    let user = position("the user's message", &|f| is_user_message(f, text));
    let error = position("the interruption error", &|f| {
        type_of(f) == "error"
            && payload_str(f, "code") == Some("internal")
            && payload_str(f, "message").is_some_and(|m| m.contains("interrupted"))
    });
    let stop = position("message.stop", &|f| type_of(f) == "message.stop");
    assert!(
        is_interrupted_stop(&frames[stop]),
        "message.stop is not marked interrupted; {}",
        shown()
    );
    assert_eq!(
        payload_str(&frames[stop], "final_text"),
        Some(""),
        "the interrupted stop carries text; {}",
        shown()
    );
    let idle = position("agent.idle", &|f| type_of(f) == "agent.idle");
    assert!(
        user < error && error < stop && stop < idle,
        "message, error, message.stop, agent.idle out of order; {}",
        shown()
    );
    let answer_id = payload_str(&frames[stop], "message_id");
    let answer = format!("echo: {text}");
    for (index, frame) in frames.iter().enumerate() {
        if type_of(frame) != "message.update" || payload_str(frame, "message_id") != answer_id {
            continue;
        }
        assert!(
            index < stop,
            "a message.update came after the stop; {}",
            shown()
        );
        let update = payload_str(frame, "text").unwrap_or_default();
        assert!(
            answer.starts_with(update),
            "update text {update:?} is not a prefix of {answer:?}; {}",
            shown()
        );
    }
}

/// Reads frames into `frames` until the `message.stop` answering `text` and the `agent.idle` after it.
pub async fn recv_through_answer(device: &mut Client, text: &str, frames: &mut Vec<Value>) {
    let mut answered = false;
    loop {
        let frame = device
            .recv_within(Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("no answer to {text:?}; so far: {frames:#?}"));
        answered |= is_stop_answering(&frame, text);
        let idle = type_of(&frame) == "agent.idle";
        frames.push(frame);
        if answered && idle {
            return;
        }
    }
}
