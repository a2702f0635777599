//! The `history` app payload, whose page size is checked while parsing.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// Smallest page size `history` accepts.
pub const MIN_HISTORY_LIMIT: u32 = 1;
/// Largest page size `history` accepts.
pub const MAX_HISTORY_LIMIT: u32 = 200;

/// Payload of `history`: load a page of messages (initial open or scrolling up).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryRequest {
    /// Return messages older than this one; `None` for the newest page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_message_id: Option<String>,
    /// Page size, within [`MIN_HISTORY_LIMIT`]..=[`MAX_HISTORY_LIMIT`]; anything else fails to parse.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_limit"
    )]
    pub limit: Option<u32>,
}

fn deserialize_limit<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let Some(limit) = Option::<u64>::deserialize(deserializer)? else {
        return Ok(None);
    };
    u32::try_from(limit)
        .ok()
        .filter(|limit| (MIN_HISTORY_LIMIT..=MAX_HISTORY_LIMIT).contains(limit))
        .map(Some)
        .ok_or_else(|| {
            D::Error::custom(format!(
                "history limit must be between {MIN_HISTORY_LIMIT} and {MAX_HISTORY_LIMIT}, got {limit}"
            ))
        })
}
