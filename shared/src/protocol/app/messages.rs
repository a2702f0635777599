//! Message app payloads: `message.send` and `read.receipt`.

use serde::{Deserialize, Serialize};

/// Payload of `message.send`: the user sends a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageSend {
    /// The text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The message this one answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Media uploaded beforehand (`media.upload.*`) to attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_refs: Option<Vec<String>>,
}

/// Payload of `read.receipt`: the user viewed a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadReceipt {
    /// Chat of the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// The viewed message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}
