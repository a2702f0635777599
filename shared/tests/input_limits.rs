//! What `parse_app_frame_within` answers to frames over the input limits and to numbers
//! out of range: each refusal names the field or limit and keeps the request id.

use iris_shared::protocol::{
    parse_app_frame, parse_app_frame_within, InputLimits, ProtocolError, ProtocolErrorKind,
};

fn refused(text: &str) -> ProtocolError {
    match parse_app_frame_within(text, &InputLimits::default()) {
        Ok(frame) => panic!("{text} must be refused, parsed as {frame:?}"),
        Err(error) => error,
    }
}

#[test]
fn frames_nested_deeper_than_the_limit_are_refused_with_their_id() {
    let deep = format!(
        r#"{{"v":1,"id":5,"type":"ping","payload":{{"x":{}{}}}}}"#,
        "[".repeat(40),
        "]".repeat(40)
    );
    let error = refused(&deep);
    assert_eq!(error.kind, ProtocolErrorKind::TooDeep { limit: 32 });
    assert_eq!(error.request_id, Some(5));
    assert!(error.to_string().contains("32"), "{error}");

    let shallow = format!(
        r#"{{"v":1,"id":6,"type":"ping","payload":{{"x":{}{}}}}}"#,
        "[".repeat(20),
        "]".repeat(20)
    );
    assert!(parse_app_frame_within(&shallow, &InputLimits::default()).is_ok());
}

#[test]
fn depth_far_beyond_serdes_recursion_limit_is_refused_before_parsing() {
    let abyss = "[".repeat(60_000);
    let error = refused(&abyss);
    assert_eq!(error.kind, ProtocolErrorKind::TooDeep { limit: 32 });
    assert_eq!(error.request_id, None);
}

#[test]
fn over_long_fields_are_named_with_their_limit_and_the_request_id() {
    let cases = [
        (
            format!(
                r#"{{"v":1,"id":1,"type":"ping","chat_id":"{}"}}"#,
                "c".repeat(129)
            ),
            "chat_id",
            128,
        ),
        (
            format!(
                r#"{{"v":1,"id":1,"type":"message.send","payload":{{"text":"{}"}}}}"#,
                "t".repeat(32 * 1024 + 1)
            ),
            "payload.text",
            32 * 1024,
        ),
        (
            format!(
                r#"{{"v":1,"id":1,"type":"channel.create","payload":{{"name":"{}"}}}}"#,
                "n".repeat(257)
            ),
            "payload.name",
            256,
        ),
        (
            format!(
                r#"{{"v":1,"id":1,"type":"search","payload":{{"query":"{}"}}}}"#,
                "q".repeat(1025)
            ),
            "payload.query",
            1024,
        ),
        (
            format!(
                r#"{{"v":1,"id":1,"type":"fcm.register","payload":{{"fcm_token":"{}"}}}}"#,
                "f".repeat(1025)
            ),
            "payload.fcm_token",
            1024,
        ),
        (
            format!(
                r#"{{"v":1,"id":1,"type":"picker.select","payload":{{"picker_id":"{}"}}}}"#,
                "p".repeat(129)
            ),
            "payload.picker_id",
            128,
        ),
    ];
    for (text, field, limit) in cases {
        let error = refused(&text);
        assert_eq!(error.request_id, Some(1), "{field}");
        let message = error.to_string();
        assert!(
            message.contains(field) && message.contains(&limit.to_string()),
            "{field}: {message}"
        );
        // The plain parser has no length limits.
        assert!(parse_app_frame(&text).is_ok(), "{field}");
    }
}

#[test]
fn multi_byte_text_is_measured_in_bytes() {
    let limits = InputLimits {
        max_text_bytes: 4,
        ..InputLimits::default()
    };
    let two_chars = r#"{"v":1,"type":"message.send","payload":{"text":"éé"}}"#;
    assert!(parse_app_frame_within(two_chars, &limits).is_ok());
    let three_chars = r#"{"v":1,"type":"message.send","payload":{"text":"ééé"}}"#;
    assert!(parse_app_frame_within(three_chars, &limits).is_err());
}

#[test]
fn huge_numbers_get_a_clear_error_not_a_wrap() {
    let error = refused(r#"{"v":1,"id":1e400,"type":"ping"}"#);
    assert!(error.to_string().contains("number out of range"), "{error}");

    let error = refused(r#"{"v":1,"id":99999999999999999999,"type":"ping"}"#);
    assert!(
        error.to_string().contains("18446744073709551615"),
        "{error}"
    );

    let error =
        refused(r#"{"v":1,"id":3,"type":"sync","payload":{"cursor":99999999999999999999999}}"#);
    assert_eq!(error.request_id, Some(3));
    let message = error.to_string();
    assert!(
        message.contains("\"cursor\"") && message.contains("out of range"),
        "{message}"
    );

    let error = refused(r#"{"v":1,"id":4,"type":"ping","payload":{"ts":-1}}"#);
    assert!(error.to_string().contains("out of range"), "{error}");

    let error = refused(r#"{"v":1,"id":5,"type":"history","payload":{"limit":4294967297}}"#);
    assert!(error.to_string().contains("between 1 and 200"), "{error}");
}
