//! Failures of an OpenAI-compatible upstream as messages people can act on: OpenAI-style
//! error bodies (`{"error": {"message": ...}}`) and broken or silent connections.

use std::error::Error;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

/// Longest piece of a non-JSON error body quoted in a message.
const MAX_QUOTED_BODY: usize = 300;

/// The message of an OpenAI-style error object (`{"error": {"message": ...}}`, or
/// `{"error": "..."}` as some servers send), if `value` is one.
pub(super) fn error_message(value: &Value) -> Option<String> {
    match value.get("error")? {
        Value::String(message) => Some(message.clone()),
        Value::Object(error) => Some(match error.get("message") {
            Some(Value::String(message)) => message.clone(),
            _ => Value::Object(error.clone()).to_string(),
        }),
        _ => None,
    }
}

/// What an HTTP error answer says: its status and the error message of its body.
pub(super) fn http_failure(status: StatusCode, body: &str) -> String {
    let detail = match serde_json::from_str::<Value>(body) {
        Ok(value) => error_message(&value),
        Err(_) => Some(
            body.trim()
                .chars()
                .take(MAX_QUOTED_BODY)
                .collect::<String>(),
        ),
    };
    match detail.filter(|detail| !detail.is_empty()) {
        Some(detail) => format!("{status}: {detail}"),
        None => status.to_string(),
    }
}

/// Why reading from the upstream failed; `idle` is the silence after which reads give up.
pub(super) fn transport_failure(err: &reqwest::Error, idle: Duration) -> String {
    if err.is_timeout() {
        format!("the agent upstream sent nothing for {idle:?}")
    } else {
        format!(
            "the connection to the agent upstream broke: {}",
            with_causes(err)
        )
    }
}

/// `err` followed by its causes, because reqwest's own message rarely says what happened
/// ("error sending request" — refused? reset? DNS?).
pub(super) fn with_causes(err: &dyn Error) -> String {
    let mut message = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    // Transport errors quote the URL they failed on, credentials included.
    iris_shared::redact::in_text(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_error_bodies_give_their_message() {
        let body = r#"{"error": {"message": "scripted failure (fail400)", "type": "invalid_request_error"}}"#;
        assert_eq!(
            http_failure(StatusCode::BAD_REQUEST, body),
            "400 Bad Request: scripted failure (fail400)"
        );
    }

    #[test]
    fn plain_text_and_empty_bodies_are_quoted_or_left_out() {
        assert_eq!(
            http_failure(StatusCode::BAD_GATEWAY, "upstream down\n"),
            "502 Bad Gateway: upstream down"
        );
        assert_eq!(http_failure(StatusCode::BAD_GATEWAY, ""), "502 Bad Gateway");
    }

    #[test]
    fn string_errors_are_error_objects_too() {
        let value = serde_json::json!({"error": "overloaded"});
        assert_eq!(error_message(&value).as_deref(), Some("overloaded"));
        assert_eq!(error_message(&serde_json::json!({"choices": []})), None);
    }
}
