//! What a turn starts from, read in one round trip: which of its effects earlier attempts
//! wrote (how far they got), the chat's settings and the newest entries of its current
//! conversation. All are keys of the account, so one pipeline reads them on a Redis
//! Cluster too.

use std::collections::HashMap;

use redis::aio::ConnectionLike;
use redis::streams::StreamRangeReply;

use crate::chat_settings::ChatSettings;
use crate::history::{self, HistoryEntry};
use crate::keys::AccountKeys;
use crate::partition::Partition;

/// The turn of one user's message, as it starts.
#[derive(Debug, Clone, Default)]
pub struct TurnOpening {
    /// Ordinals of the entry's effects written so far.
    pub written_effects: Vec<u32>,
    /// The chat's settings.
    pub settings: ChatSettings,
    /// The newest entries of the current conversation (after `/new`'s mark), oldest first.
    pub conversation: Vec<HistoryEntry>,
}

/// Reads the opening of the turn of message key `key` (see `user_message`) of `partition`
/// in chat `chat_id`, with at most `limit` conversation entries.
pub async fn load<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    (partition, key): (Partition, &str),
    limit: usize,
) -> redis::RedisResult<TurnOpening> {
    let keys = AccountKeys::new(account);
    let (effect_fields, settings_fields, entries): (
        Vec<String>,
        HashMap<String, String>,
        StreamRangeReply,
    ) = redis::pipe()
        .cmd("HKEYS")
        .arg(keys.turn_effects(partition, key))
        .cmd("HGETALL")
        .arg(keys.chat_settings(chat_id))
        .add_command(history::newest_command(account, chat_id, None, limit))
        .query_async(conn)
        .await?;
    let settings = ChatSettings::from_fields(&settings_fields);
    let mut conversation = history::entries_of(entries);
    // The newest `limit` of all entries, less those up to the mark: the newest `limit`
    // after it.
    if let Some(mark) = settings.context_from.as_deref() {
        conversation.retain(|entry| crate::user_message::entry_is_after(&entry.entry_id, mark));
    }
    Ok(TurnOpening {
        written_effects: effect_fields
            .iter()
            .filter_map(|field| field.parse().ok())
            .collect(),
        settings,
        conversation,
    })
}
