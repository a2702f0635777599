//! The `search` app payload.

use serde::{Deserialize, Serialize};

use crate::protocol::enums::SearchScope;

/// Payload of `search`: find messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchRequest {
    /// What to look for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Every chat or one chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<SearchScope>,
    /// The chat to search when `scope` is `chat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// The thread to search within that chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}
