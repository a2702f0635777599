//! Reading the fields of a received frame (`serde_json::Value`) without repeating the
//! JSON plumbing in every test.

use serde_json::Value;

/// The frame's `type` (empty if it has none).
pub fn type_of(frame: &Value) -> &str {
    frame["type"].as_str().unwrap_or_default()
}

/// The frame's outbox position, if it carries one.
pub fn seq_of(frame: &Value) -> Option<u64> {
    frame.get("seq").and_then(Value::as_u64)
}

/// The request id the frame answers, if any.
pub fn id_of(frame: &Value) -> Option<u64> {
    frame.get("id").and_then(Value::as_u64)
}

/// A string field of the payload.
pub fn payload_str<'a>(frame: &'a Value, field: &str) -> Option<&'a str> {
    frame["payload"][field].as_str()
}

/// An integer field of the payload.
pub fn payload_u64(frame: &Value, field: &str) -> Option<u64> {
    frame["payload"][field].as_u64()
}

/// The types of `frames`, in order.
pub fn types_of(frames: &[Value]) -> Vec<&str> {
    frames.iter().map(type_of).collect()
}

/// `(seq, type)` of every frame that carries a seq, in order.
pub fn seqs_and_types(frames: &[Value]) -> Vec<(u64, String)> {
    frames
        .iter()
        .filter_map(|frame| Some((seq_of(frame)?, type_of(frame).to_owned())))
        .collect()
}

/// The frames of type `type_name`.
pub fn of_type<'a>(frames: &'a [Value], type_name: &str) -> Vec<&'a Value> {
    frames
        .iter()
        .filter(|frame| type_of(frame) == type_name)
        .collect()
}

/// The frame without its `id` (the one field that differs between devices' copies).
pub fn without_id(frame: &Value) -> Value {
    let mut copy = frame.clone();
    if let Some(fields) = copy.as_object_mut() {
        fields.remove("id");
    }
    copy
}
