//! [`InputLimits`]: how deep a device's JSON may nest and how long each string it sends may
//! be. This is the one place that says which field falls under which limit.
//!
//! Depth is checked by a byte scan before serde parses anything, so a frame of 30,000
//! brackets costs one pass over its bytes. Field lengths are checked on the typed frame
//! right after parsing: [`field_values`] lists every string a device can send, and the
//! match in it is exhaustive, so a new frame type cannot be added without stating its
//! limits.

use super::app::{AppBody, AppFrame};

/// Default of `IRIS_MAX_JSON_DEPTH`: nesting of objects and arrays, the frame itself
/// counting as 1.
pub const DEFAULT_MAX_JSON_DEPTH: usize = 32;
/// Default of `IRIS_MAX_ID_BYTES`: chat, thread, message, device, media and picker ids.
pub const DEFAULT_MAX_ID_BYTES: usize = 128;
/// Default of `IRIS_MAX_TITLE_BYTES`: names, titles, file names, MIME types.
pub const DEFAULT_MAX_TITLE_BYTES: usize = 256;
/// Default of `IRIS_MAX_TEXT_BYTES`: message, steering and picker answer text (32 KiB).
pub const DEFAULT_MAX_TEXT_BYTES: usize = 32 * 1024;
/// Default of `IRIS_MAX_QUERY_BYTES`: search queries and command prefixes.
pub const DEFAULT_MAX_QUERY_BYTES: usize = 1024;
/// Default of `IRIS_MAX_TOKEN_BYTES`: pairing tokens, FCM tokens, ntfy topics.
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 1024;

/// The classes of device-sent strings, each with its own length limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldClass {
    /// An identifier.
    Id,
    /// A display name or label.
    Title,
    /// Free text the user wrote.
    Text,
    /// Something typed to look things up.
    Query,
    /// A credential or push address.
    Token,
}

/// Limits on what a device may send; [`Default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLimits {
    /// Deepest nesting of JSON objects and arrays.
    pub max_json_depth: usize,
    /// Longest id, in bytes.
    pub max_id_bytes: usize,
    /// Longest name or title, in bytes.
    pub max_title_bytes: usize,
    /// Longest free text, in bytes.
    pub max_text_bytes: usize,
    /// Longest search query or command prefix, in bytes.
    pub max_query_bytes: usize,
    /// Longest token or push address, in bytes.
    pub max_token_bytes: usize,
}

impl Default for InputLimits {
    fn default() -> Self {
        Self {
            max_json_depth: DEFAULT_MAX_JSON_DEPTH,
            max_id_bytes: DEFAULT_MAX_ID_BYTES,
            max_title_bytes: DEFAULT_MAX_TITLE_BYTES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
            max_query_bytes: DEFAULT_MAX_QUERY_BYTES,
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
        }
    }
}

/// A string field longer than its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTooLong {
    /// Where the field is, e.g. `payload.text` or `payload.media_refs[2]`.
    pub field: String,
    /// Its limit in bytes.
    pub limit: usize,
    /// Its length in bytes.
    pub length: usize,
}

impl InputLimits {
    /// The byte limit of a field class.
    pub fn limit_of(&self, class: FieldClass) -> usize {
        match class {
            FieldClass::Id => self.max_id_bytes,
            FieldClass::Title => self.max_title_bytes,
            FieldClass::Text => self.max_text_bytes,
            FieldClass::Query => self.max_query_bytes,
            FieldClass::Token => self.max_token_bytes,
        }
    }

    /// The first string of `frame` over its limit, if any.
    pub fn first_too_long(&self, frame: &AppFrame) -> Option<FieldTooLong> {
        field_values(frame)
            .into_iter()
            .find(|(_, class, value)| value.len() > self.limit_of(*class))
            .map(|(field, class, value)| FieldTooLong {
                field,
                limit: self.limit_of(class),
                length: value.len(),
            })
    }
}

/// Whether `text`, read as JSON, nests objects and arrays deeper than `max_depth`.
///
/// Counts brackets outside strings (skipping escaped characters inside them) and stops at
/// the first one too deep. Unbalanced or otherwise broken JSON is left to the parser.
pub fn nests_deeper_than(text: &str, max_depth: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text.as_bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Every string a device sent in `frame`, with where it is and its class.
fn field_values(frame: &AppFrame) -> Vec<(String, FieldClass, &str)> {
    use FieldClass::{Id, Query, Text, Title, Token};
    let mut fields: Vec<(&str, FieldClass, Option<&str>)> = vec![
        ("chat_id", Id, frame.chat_id.as_deref()),
        ("thread_id", Id, frame.thread_id.as_deref()),
    ];
    let mut listed = Vec::new();
    match &frame.body {
        AppBody::Hello(hello) => fields.extend([
            ("payload.token", Token, hello.token.as_deref()),
            ("payload.device_id", Id, hello.device_id.as_deref()),
            ("payload.device_name", Title, hello.device_name.as_deref()),
            ("payload.fcm_token", Token, hello.fcm_token.as_deref()),
            ("payload.ntfy_topic", Token, hello.ntfy_topic.as_deref()),
            (
                "payload.caps.push",
                Id,
                hello.caps.as_ref().and_then(|caps| caps.push.as_deref()),
            ),
        ]),
        AppBody::MessageSend(send) => {
            fields.extend([
                ("payload.text", Text, send.text.as_deref()),
                ("payload.reply_to", Id, send.reply_to.as_deref()),
            ]);
            for (index, media_ref) in send.media_refs.iter().flatten().enumerate() {
                listed.push((
                    format!("payload.media_refs[{index}]"),
                    Id,
                    media_ref.as_str(),
                ));
            }
        }
        AppBody::MediaUploadStart(start) => fields.extend([
            ("payload.media_ref", Id, start.media_ref.as_deref()),
            ("payload.mime", Title, start.mime.as_deref()),
            ("payload.filename", Title, start.filename.as_deref()),
        ]),
        AppBody::MediaUploadEnd(end) => fields.extend([
            ("payload.media_ref", Id, end.media_ref.as_deref()),
            ("payload.sha256", Id, end.sha256.as_deref()),
        ]),
        AppBody::MediaPull(pull) => fields.push(("payload.media_id", Id, pull.media_id.as_deref())),
        AppBody::PickerSelect(select) => fields.extend([
            ("payload.picker_id", Id, select.picker_id.as_deref()),
            ("payload.value", Text, select.value.as_deref()),
        ]),
        AppBody::ChannelCreate(create) => fields.extend([
            ("payload.name", Title, create.name.as_deref()),
            (
                "payload.parent_chat_id",
                Id,
                create.parent_chat_id.as_deref(),
            ),
        ]),
        AppBody::ChannelRename(rename) => {
            fields.push(("payload.name", Title, rename.name.as_deref()))
        }
        AppBody::Search(search) => fields.extend([
            ("payload.query", Query, search.query.as_deref()),
            ("payload.chat_id", Id, search.chat_id.as_deref()),
            ("payload.thread_id", Id, search.thread_id.as_deref()),
        ]),
        AppBody::History(history) => fields.push((
            "payload.before_message_id",
            Id,
            history.before_message_id.as_deref(),
        )),
        AppBody::CommandsComplete(complete) => {
            fields.push(("payload.prefix", Query, complete.prefix.as_deref()))
        }
        AppBody::AgentSteer(steer) => fields.push(("payload.text", Text, steer.text.as_deref())),
        AppBody::ReadReceipt(receipt) => fields.extend([
            ("payload.chat_id", Id, receipt.chat_id.as_deref()),
            ("payload.message_id", Id, receipt.message_id.as_deref()),
        ]),
        AppBody::FcmRegister(register) => fields.extend([
            ("payload.fcm_token", Token, register.fcm_token.as_deref()),
            ("payload.ntfy_topic", Token, register.ntfy_topic.as_deref()),
        ]),
        AppBody::ChannelSetDefault(_)
        | AppBody::ChannelDelete(_)
        | AppBody::CommandsCatalog(_)
        | AppBody::AgentStop(_)
        | AppBody::Sync(_)
        | AppBody::Ping(_) => {}
    }
    fields
        .into_iter()
        .filter_map(|(field, class, value)| Some((field.to_owned(), class, value?)))
        .chain(listed)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::app::MessageSend;

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!nests_deeper_than(r#"{"a":[1,{"b":2}]}"#, 3));
        assert!(nests_deeper_than(r#"{"a":[1,{"b":[2]}]}"#, 3));
        assert!(!nests_deeper_than(r#"{"a":"[[[[{{{{"}"#, 1));
        assert!(!nests_deeper_than(r#"{"a":"\"[[[["}"#, 1));
        assert!(nests_deeper_than(&"[".repeat(100_000), 32));
        assert!(!nests_deeper_than("]]]]}}}}", 1));
    }

    #[test]
    fn the_first_over_long_field_is_named_with_its_limit() {
        let limits = InputLimits {
            max_id_bytes: 4,
            max_text_bytes: 8,
            ..InputLimits::default()
        };
        let send = MessageSend {
            text: Some("12345678".into()),
            media_refs: Some(vec!["ok".into(), "too-long".into()]),
            ..MessageSend::default()
        };
        let frame = AppFrame::new(send).with_chat("abcd");
        assert_eq!(
            limits.first_too_long(&frame),
            Some(FieldTooLong {
                field: "payload.media_refs[1]".into(),
                limit: 4,
                length: 8,
            })
        );
        let frame = frame.with_chat("abcde");
        assert_eq!(
            limits.first_too_long(&frame).map(|too_long| too_long.field),
            Some("chat_id".into())
        );
    }
}
