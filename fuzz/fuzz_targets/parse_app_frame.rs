//! Fuzz target: any bytes, read as UTF-8 text (only valid UTF-8 reaches the parser over a
//! WebSocket, but lossy conversion lets every input count), through `parse_app_frame`
//! and `parse_app_frame_within` with the default limits. Both must return, never panic;
//! what the limited parser accepts the plain one must accept identically.

#![no_main]

use iris_shared::protocol::{parse_app_frame, parse_app_frame_within, InputLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let plain = parse_app_frame(&text);
    let limited = parse_app_frame_within(&text, &InputLimits::default());
    if let Ok(frame) = &limited {
        assert_eq!(plain.as_ref().ok(), Some(frame));
        // An accepted frame serializes and parses back to itself.
        assert_eq!(parse_app_frame(&frame.to_json()).as_ref(), Ok(frame));
    }
    if let Err(error) = &limited {
        let _ = error.to_error_frame().to_json();
    }
});
