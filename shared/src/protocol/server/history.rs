//! The `history` server payload: a page of stored messages.

use serde::{Deserialize, Serialize};

use super::MediaRef;

use crate::protocol::enums::Role;

/// Payload of `history`: a page of messages, oldest to newest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The page, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<HistoryMessage>>,
    /// True when older messages exist before this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Id of the oldest message on the page; pass it as `before_message_id` for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_message_id: Option<String>,
}

/// One stored message in a `history` page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryMessage {
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
    /// Model that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// When it was written, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
    /// Extension to the contract: media attached to the message (as on `message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<Vec<MediaRef>>,
}
