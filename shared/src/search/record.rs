//! The message to index, and the record the index keeps for it (the source of a hit).

use serde::{Deserialize, Serialize};

use crate::protocol::enums::Role;
use crate::protocol::server::SearchHit;
use crate::search::query_terms::QueryTerm;
use crate::search::snippet::snippet;

/// Bytes of a message's text kept for snippets; every word of the full text is indexed.
pub const MAX_STORED_TEXT_BYTES: usize = 16 * 1024;

/// One finished message, as the index takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedMessage {
    /// Chat it is in.
    pub chat_id: String,
    /// Thread it is in, if any.
    pub thread_id: Option<String>,
    /// Its id; with `chat_id` it identifies the message in the index.
    pub message_id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub text: String,
    /// When it was written, epoch milliseconds (hits are ordered by it, newest first).
    pub ts: u64,
}

/// What the index stores per message, as compact JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRecord {
    /// Chat id.
    #[serde(rename = "c")]
    pub chat_id: String,
    /// Thread id, if any.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Message id.
    #[serde(rename = "m")]
    pub message_id: String,
    /// Author.
    #[serde(rename = "r")]
    pub role: Role,
    /// Epoch milliseconds.
    pub ts: u64,
    /// The text, cut to [`MAX_STORED_TEXT_BYTES`] at a char boundary.
    #[serde(rename = "x")]
    pub text: String,
}

impl StoredRecord {
    /// The record for `message`.
    pub fn new(message: &IndexedMessage) -> Self {
        Self {
            chat_id: message.chat_id.clone(),
            thread_id: message.thread_id.clone(),
            message_id: message.message_id.clone(),
            role: message.role,
            ts: message.ts,
            text: truncate(&message.text, MAX_STORED_TEXT_BYTES).to_owned(),
        }
    }

    /// The search hit for this record, with a snippet around the first match of `terms`.
    pub fn into_hit(self, terms: &[QueryTerm]) -> SearchHit {
        SearchHit {
            snippet: Some(snippet(&self.text, terms)),
            message_id: Some(self.message_id),
            chat_id: Some(self.chat_id),
            thread_id: self.thread_id,
            role: Some(self.role),
            ts: Some(self.ts),
        }
    }
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a char boundary.
fn truncate(text: &str, max_bytes: usize) -> &str {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_as_compact_json() {
        let record = StoredRecord::new(&IndexedMessage {
            chat_id: "android:default".into(),
            thread_id: None,
            message_id: "m1".into(),
            role: Role::Assistant,
            text: "hello".into(),
            ts: 7,
        });
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(
            json,
            r#"{"c":"android:default","m":"m1","r":"assistant","ts":7,"x":"hello"}"#
        );
        assert_eq!(serde_json::from_str::<StoredRecord>(&json).unwrap(), record);
    }

    #[test]
    fn truncates_on_a_char_boundary() {
        assert_eq!(truncate("aé", 2), "a");
        assert_eq!(truncate("aé", 3), "aé");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
