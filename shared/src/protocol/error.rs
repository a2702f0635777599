//! [`ProtocolError`]: why an app frame was rejected, plus the request id to answer with.

use serde_json::Value;

use super::enums::ErrorCode;
use super::envelope::PROTOCOL_VERSION;
use super::server::{ErrorPayload, ServerFrame};

/// An app frame that could not be accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}")]
pub struct ProtocolError {
    /// The frame's `id`, whenever it could be read, so the `error` answer can carry it.
    pub request_id: Option<u64>,
    /// What was wrong.
    pub kind: ProtocolErrorKind,
}

/// What was wrong with a rejected app frame.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProtocolErrorKind {
    /// Not JSON, not an object, or an envelope field (`id`, `type`, `chat_id`, `thread_id`) is missing or mistyped.
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// `v` is missing, not an integer, or not a version this server speaks.
    #[error("{}", describe_wrong_version(.found.as_ref()))]
    WrongVersion {
        /// The `v` the frame carried, if any.
        found: Option<Value>,
    },
    /// `type` is not an app → server type of the contract.
    #[error("unknown frame type \"{0}\"")]
    UnknownType(String),
    /// The payload is not an object or one of its fields has the wrong type or value.
    #[error("bad payload for \"{type_name}\": {detail}")]
    BadPayload {
        /// The frame's type.
        type_name: String,
        /// What is wrong with the payload.
        detail: String,
    },
    /// Objects and arrays nest deeper than the limit.
    #[error("frame nests objects and arrays deeper than {limit} levels")]
    TooDeep {
        /// The depth limit.
        limit: usize,
    },
    /// A string is longer than the limit of its field.
    #[error("field \"{field}\" is {length} bytes; the limit is {limit}")]
    FieldTooLong {
        /// Where the string is, e.g. `payload.text`.
        field: String,
        /// Its limit in bytes.
        limit: usize,
        /// Its length in bytes.
        length: usize,
    },
}

fn describe_wrong_version(found: Option<&Value>) -> String {
    match found {
        None => {
            format!("frame has no protocol version \"v\"; this server speaks v{PROTOCOL_VERSION}")
        }
        Some(version) => format!(
            "protocol version {version} is not supported; this server speaks v{PROTOCOL_VERSION}"
        ),
    }
}

impl ProtocolError {
    /// An error about the frame with the given request id.
    pub fn new(request_id: Option<u64>, kind: ProtocolErrorKind) -> Self {
        Self { request_id, kind }
    }

    /// The `error` frame (code `unsupported`) to send back, answering the request id if known.
    pub fn to_error_frame(&self) -> ServerFrame {
        ServerFrame::new(ErrorPayload::new(ErrorCode::Unsupported, self.to_string()))
            .with_id(self.request_id)
    }
}
