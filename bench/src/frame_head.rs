//! The little the bench reads of a received frame: its `type`, `seq` and `id` (borrowed
//! from the text, the payload skipped), and the send time a bench-made text carries.

use serde::Deserialize;

/// Text marker before a bench send time (µs since the run's clock started).
const STAMP_MARKER: &str = "bench:";

/// The envelope fields of one frame.
#[derive(Debug, Deserialize)]
pub struct FrameHead<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: &'a str,
    #[serde(default)]
    pub seq: Option<u64>,
    #[serde(default)]
    pub id: Option<u64>,
}

impl<'a> FrameHead<'a> {
    /// The head of `text`, or `None` if it is not a frame.
    pub fn parse(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

/// A message text carrying `stamp_us`, found again by [`stamp_in`] wherever the frame
/// quotes it (`message.text`, an echo's `final_text`).
pub fn stamped_text(stamp_us: u64) -> String {
    format!("{STAMP_MARKER}{stamp_us}")
}

/// The first send time stamped into `frame_text`.
pub fn stamp_in(frame_text: &str) -> Option<u64> {
    let start = frame_text.find(STAMP_MARKER)? + STAMP_MARKER.len();
    let digits = &frame_text[start..];
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_read_and_the_payload_skipped() {
        let text = r#"{"v":1,"type":"message","seq":42,"payload":{"text":"bench:1234 x","nested":[{"a":1}]}}"#;
        let head = FrameHead::parse(text).unwrap();
        assert_eq!((head.kind, head.seq, head.id), ("message", Some(42), None));
        assert_eq!(stamp_in(text), Some(1234));
        assert_eq!(stamp_in(r#"{"type":"pong"}"#), None);
    }
}
