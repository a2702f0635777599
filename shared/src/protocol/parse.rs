//! Parsing an app's text frame into an [`AppFrame`], with a precise [`ProtocolError`] otherwise.
//!
//! Rules: the frame is a JSON object with `v: 1` and a known `type`; `id` (a non-negative integer),
//! `chat_id` and `thread_id` (strings) are optional; a missing `payload` means `{}`. Unknown
//! envelope and payload fields are ignored. A JSON `null` counts as absent for every optional field.
//! [`parse_app_frame_within`] also applies [`InputLimits`]: nesting depth before parsing, string
//! lengths right after.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::app::{AppBody, AppFrame};
use super::envelope::PROTOCOL_VERSION;
use super::error::{ProtocolError, ProtocolErrorKind};
use super::limits::{nests_deeper_than, InputLimits};

/// Parses one text frame from the app.
///
/// The returned error carries the frame's `id` whenever it could be read, even if the rest is broken.
pub fn parse_app_frame(text: &str) -> Result<AppFrame, ProtocolError> {
    let value: Value = serde_json::from_str(text).map_err(|error| {
        ProtocolError::new(
            None,
            ProtocolErrorKind::Malformed(format!("not valid JSON: {error}")),
        )
    })?;
    parse_app_value(value)
}

/// Like [`parse_app_frame`], but refuses frames nested deeper than `limits.max_json_depth`
/// (checked by a byte scan before parsing) and frames with a string over its length limit.
/// Every refusal names the limit and, for strings, the field; it carries the request id
/// whenever the frame is shallow enough for serde to find it.
pub fn parse_app_frame_within(text: &str, limits: &InputLimits) -> Result<AppFrame, ProtocolError> {
    if nests_deeper_than(text, limits.max_json_depth) {
        let kind = ProtocolErrorKind::TooDeep {
            limit: limits.max_json_depth,
        };
        return Err(ProtocolError::new(request_id_of_deep_frame(text), kind));
    }
    let frame = parse_app_frame(text)?;
    match limits.first_too_long(&frame) {
        None => Ok(frame),
        Some(too_long) => Err(ProtocolError::new(
            frame.id,
            ProtocolErrorKind::FieldTooLong {
                field: too_long.field,
                limit: too_long.limit,
                length: too_long.length,
            },
        )),
    }
}

/// The `id` of a frame refused for its depth, read by serde without building the rest
/// (serde's own recursion limit still bounds the work).
fn request_id_of_deep_frame(text: &str) -> Option<u64> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<u64>,
    }
    serde_json::from_str::<IdOnly>(text).ok()?.id
}

/// Like [`parse_app_frame`], for JSON that is already parsed.
pub(crate) fn parse_app_value(value: Value) -> Result<AppFrame, ProtocolError> {
    let Value::Object(mut fields) = value else {
        return Err(malformed(None, "a frame must be a JSON object"));
    };
    let id = read_request_id(&fields)?;
    check_version(&fields).map_err(|kind| ProtocolError::new(id, kind))?;
    let type_name = match fields.get("type") {
        Some(Value::String(type_name)) => type_name.clone(),
        Some(_) => return Err(malformed(id, "\"type\" must be a string")),
        None => return Err(malformed(id, "frame has no \"type\"")),
    };
    let chat_id =
        read_optional_string(&fields, "chat_id").map_err(|kind| ProtocolError::new(id, kind))?;
    let thread_id =
        read_optional_string(&fields, "thread_id").map_err(|kind| ProtocolError::new(id, kind))?;
    let payload = fields.remove("payload");
    let body = parse_body(&type_name, payload).map_err(|kind| ProtocolError::new(id, kind))?;
    Ok(AppFrame {
        id,
        chat_id,
        thread_id,
        body,
    })
}

fn malformed(request_id: Option<u64>, detail: &str) -> ProtocolError {
    ProtocolError::new(request_id, ProtocolErrorKind::Malformed(detail.to_owned()))
}

fn read_request_id(fields: &Map<String, Value>) -> Result<Option<u64>, ProtocolError> {
    match fields.get("id") {
        None | Some(Value::Null) => Ok(None),
        Some(id) => id.as_u64().map(Some).ok_or_else(|| {
            let detail = match id {
                Value::Number(number) => format!(
                    "\"id\" must be a non-negative integer of at most {}, got {number}",
                    u64::MAX
                ),
                _ => "\"id\" must be a non-negative integer".to_owned(),
            };
            malformed(None, &detail)
        }),
    }
}

fn check_version(fields: &Map<String, Value>) -> Result<(), ProtocolErrorKind> {
    let found = fields.get("v");
    if found.and_then(Value::as_u64) == Some(PROTOCOL_VERSION) {
        Ok(())
    } else {
        Err(ProtocolErrorKind::WrongVersion {
            found: found.cloned(),
        })
    }
}

fn read_optional_string(
    fields: &Map<String, Value>,
    name: &str,
) -> Result<Option<String>, ProtocolErrorKind> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ProtocolErrorKind::Malformed(format!(
            "\"{name}\" must be a string"
        ))),
    }
}

fn parse_body(type_name: &str, payload: Option<Value>) -> Result<AppBody, ProtocolErrorKind> {
    if !AppBody::TYPE_NAMES.contains(&type_name) {
        return Err(ProtocolErrorKind::UnknownType(type_name.to_owned()));
    }
    let bad_payload = |detail: String| ProtocolErrorKind::BadPayload {
        type_name: type_name.to_owned(),
        detail,
    };
    let payload = match payload {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(payload)) => payload,
        Some(other) => {
            return Err(bad_payload(format!(
                "payload must be a JSON object, got {}",
                json_kind(&other)
            )))
        }
    };
    let tagged = tagged_body(type_name, payload);
    AppBody::deserialize(&tagged).map_err(|error| {
        bad_payload(describe_payload_error(
            type_name,
            &tagged["payload"],
            &error,
        ))
    })
}

/// The adjacently tagged form `{"type": ..., "payload": {...}}` that [`AppBody`] deserializes from.
fn tagged_body(type_name: &str, payload: Map<String, Value>) -> Value {
    serde_json::json!({ "type": type_name, "payload": payload })
}

/// The serde error, prefixed with the payload field it came from when that field alone triggers it.
fn describe_payload_error(type_name: &str, payload: &Value, error: &serde_json::Error) -> String {
    let culprit = payload
        .as_object()
        .into_iter()
        .flatten()
        .find(|(name, value)| {
            let single_field = Map::from_iter([((*name).clone(), (*value).clone())]);
            AppBody::deserialize(&tagged_body(type_name, single_field)).is_err()
        });
    match culprit {
        Some((name, Value::Number(number))) if expects_unsigned(error) => format!(
            "field \"{name}\": {number} is out of range: expected an integer from 0 to {}",
            u64::MAX
        ),
        Some((name, _)) => format!("field \"{name}\": {error}"),
        None => error.to_string(),
    }
}

/// Whether serde wanted an unsigned integer: every number an app sends is one, so a
/// negative, fractional or too large number (serde_json reads integers past `u64::MAX`
/// as floats) gets a message saying the range instead of serde's type wording.
fn expects_unsigned(error: &serde_json::Error) -> bool {
    let text = error.to_string();
    text.contains("expected u64") || text.contains("expected u32")
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Deserializing an [`AppFrame`] applies the rules of [`parse_app_frame`].
impl<'de> Deserialize<'de> for AppFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse_app_value(value).map_err(D::Error::custom)
    }
}
