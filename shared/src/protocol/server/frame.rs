//! [`ServerFrame`]: a server → app body wrapped in the flat v1 envelope.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::ServerBody;
use crate::protocol::envelope::{OutgoingEnvelope, PROTOCOL_VERSION};

/// One server → app frame.
///
/// Serializes as one flat object `{"v":1, "id"?, "seq"?, "chat_id"?, "thread_id"?, "type", "payload"}`;
/// absent fields are omitted and `payload` is always present (`{}` when empty).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFrame {
    /// The request id this frame answers; `None` for pure events.
    pub id: Option<u64>,
    /// Position in the account's outbox, for frames that are replayable by `sync`.
    pub seq: Option<u64>,
    /// Chat the frame belongs to.
    pub chat_id: Option<String>,
    /// Thread within the chat.
    pub thread_id: Option<String>,
    /// Type and payload.
    pub body: ServerBody,
}

impl ServerFrame {
    /// A frame with no id, seq or scope.
    pub fn new(body: impl Into<ServerBody>) -> Self {
        Self {
            id: None,
            seq: None,
            chat_id: None,
            thread_id: None,
            body: body.into(),
        }
    }

    /// Sets the request id this frame answers (or clears it with `None`).
    pub fn with_id(mut self, id: Option<u64>) -> Self {
        self.id = id;
        self
    }

    /// Sets the outbox sequence number.
    pub fn with_seq(mut self, seq: u64) -> Self {
        self.seq = Some(seq);
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

    /// The frame as JSON text, ready for a WebSocket text message.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("server frames have string keys and always serialize")
    }
}

impl Serialize for ServerFrame {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OutgoingEnvelope {
            v: PROTOCOL_VERSION,
            id: self.id,
            seq: self.seq,
            chat_id: self.chat_id.as_deref(),
            thread_id: self.thread_id.as_deref(),
            body: &self.body,
        }
        .serialize(serializer)
    }
}

/// The flat envelope as read back; `payload` defaults to `{}`.
#[derive(Deserialize)]
struct IncomingServerFrame {
    v: u64,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    chat_id: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(rename = "type")]
    type_name: String,
    #[serde(default)]
    payload: Option<Map<String, Value>>,
}

impl<'de> Deserialize<'de> for ServerFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = IncomingServerFrame::deserialize(deserializer)?;
        if wire.v != PROTOCOL_VERSION {
            return Err(D::Error::custom(format!(
                "protocol version {} is not supported; expected v{PROTOCOL_VERSION}",
                wire.v
            )));
        }
        let tagged = serde_json::json!({
            "type": wire.type_name,
            "payload": wire.payload.unwrap_or_default(),
        });
        let body = ServerBody::deserialize(tagged).map_err(D::Error::custom)?;
        Ok(Self {
            id: wire.id,
            seq: wire.seq,
            chat_id: wire.chat_id,
            thread_id: wire.thread_id,
            body,
        })
    }
}
