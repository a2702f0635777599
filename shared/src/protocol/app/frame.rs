//! [`AppFrame`]: an app → server body wrapped in the flat v1 envelope.

use serde::{Serialize, Serializer};

use super::AppBody;
use crate::protocol::envelope::{OutgoingEnvelope, PROTOCOL_VERSION};

/// One app → server frame.
///
/// Serializes as `{"v":1, "id"?, "chat_id"?, "thread_id"?, "type", "payload"}`; deserializing applies
/// the same rules as [`crate::protocol::parse_app_frame`] (its `Deserialize` lives there).
#[derive(Debug, Clone, PartialEq)]
pub struct AppFrame {
    /// Request id; the server's answer carries it back.
    pub id: Option<u64>,
    /// Chat the request is about.
    pub chat_id: Option<String>,
    /// Thread within the chat.
    pub thread_id: Option<String>,
    /// Type and payload.
    pub body: AppBody,
}

impl AppFrame {
    /// A frame with no id or scope.
    pub fn new(body: impl Into<AppBody>) -> Self {
        Self {
            id: None,
            chat_id: None,
            thread_id: None,
            body: body.into(),
        }
    }

    /// Sets the request id (or clears it with `None`).
    pub fn with_id(mut self, id: Option<u64>) -> Self {
        self.id = id;
        self
    }

    /// Scopes the frame to a chat.
    pub fn with_chat(mut self, chat_id: impl Into<String>) -> Self {
        self.chat_id = Some(chat_id.into());
        self
    }

    /// Scopes the frame to a thread within its chat.
    pub fn with_thread(mut self, thread_id: impl Into<String>) -> Self {
        self.thread_id = Some(thread_id.into());
        self
    }

    /// The frame as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("app frames have string keys and always serialize")
    }
}

impl Serialize for AppFrame {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OutgoingEnvelope {
            v: PROTOCOL_VERSION,
            id: self.id,
            seq: None,
            chat_id: self.chat_id.as_deref(),
            thread_id: self.thread_id.as_deref(),
            body: &self.body,
        }
        .serialize(serializer)
    }
}
