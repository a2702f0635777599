//! The `search.results` server payload.

use serde::{Deserialize, Serialize};

use crate::protocol::enums::{Role, SearchScope};

/// Payload of `search.results`: the answer to `search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query that was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Where it looked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<SearchScope>,
    /// Matching messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<Vec<SearchHit>>,
}

/// One message matching a search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The matching message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Chat it is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// Thread it is in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Who wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Excerpt around the match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// When it was written, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}
