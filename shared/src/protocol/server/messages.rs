//! Message server payloads: final messages, the streaming trio, commentary, typing, notifications.

use serde::{Deserialize, Serialize};

use super::MediaRef;
use crate::protocol::enums::{NotificationKind, Role};

/// Payload of `message`: a final or standalone message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessagePayload {
    /// Stable id of the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Who wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// The message text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Reasoning, rendered above the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Attached media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<Vec<MediaRef>>,
    /// The message this one answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Model that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// When it was written, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

/// Payload of `message.start`: a streamed message begins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageStart {
    /// Id shared by the following `message.update` and `message.stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Who writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

/// Payload of `message.update`: the full current text (the app replaces, not appends).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageUpdate {
    /// The streamed message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Full text so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Payload of `message.stop`: a streamed message is complete.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageStop {
    /// The streamed message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The final text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_text: Option<String>,
    /// Reasoning, rendered above the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Model that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// `true` when the turn was cut off (its worker stopped) and this is not the whole
    /// answer (an extension to the contract).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
}

/// Payload of `commentary`: an intermediate assistant beat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Commentary {
    /// Id of the beat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Payload of `typing`: the typing indicator switches on or off.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Typing {
    /// True to show the indicator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<bool>,
}

/// Payload of `notification`: something worth a system notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// What it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<NotificationKind>,
    /// Headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Body text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// When it happened, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
    /// Extension to the contract: the picker this notice resolves (devices close it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// Extension to the contract: the answer that resolved the picker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
}

impl Notification {
    /// A `generic` notice with `title`, stamped now.
    pub fn generic(title: impl Into<String>) -> Self {
        Self {
            kind: Some(NotificationKind::Generic),
            title: Some(title.into()),
            ts: Some(crate::clock::now_ms()),
            ..Default::default()
        }
    }
}
