//! Pages of a chat's history (`iris:{a:A}:history:<chat>`), newest page first, each page
//! oldest → newest, addressed by message id through the account's message index.

use redis::aio::ConnectionLike;
use redis::streams::StreamRangeReply;

use crate::keys::AccountKeys;
use crate::protocol::{HistoryMessage, MessagePayload};

/// Field of a history entry holding the message (JSON), as `scripts/outbox_append.lua`
/// writes it.
pub const MESSAGE_FIELD: &str = "m";

/// Why a page cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// `before_message_id` is not a message of this chat.
    #[error("message {0:?} is not in this chat")]
    UnknownMessage(String),
    /// Redis failed.
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// One page of history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryPage {
    /// The messages, oldest first.
    pub messages: Vec<HistoryMessage>,
    /// Whether older messages exist.
    pub has_more: bool,
}

/// Up to `limit` messages of `chat_id` older than `before_message_id` (or the newest).
pub async fn page<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    before_message_id: Option<&str>,
    limit: usize,
) -> Result<HistoryPage, HistoryError> {
    let keys = AccountKeys::new(account);
    let end = match before_message_id {
        None => "+".to_owned(),
        Some(message_id) => {
            let located: Option<String> = redis::cmd("HGET")
                .arg(keys.messages())
                .arg(message_id)
                .query_async(conn)
                .await?;
            let entry = located
                .as_deref()
                .and_then(|l| l.rsplit_once('|'))
                .filter(|(chat, _)| *chat == chat_id)
                .map(|(_, entry)| entry.to_owned());
            match entry {
                Some(entry) => format!("({entry}"),
                None => return Err(HistoryError::UnknownMessage(message_id.to_owned())),
            }
        }
    };
    let reply: StreamRangeReply = redis::cmd("XREVRANGE")
        .arg(keys.history(chat_id))
        .arg(end)
        .arg("-")
        .arg("COUNT")
        .arg(limit + 1)
        .query_async(conn)
        .await?;
    let has_more = reply.ids.len() > limit;
    let mut messages: Vec<HistoryMessage> = reply
        .ids
        .iter()
        .take(limit)
        .filter_map(|entry| {
            let json: String = entry.get(MESSAGE_FIELD)?;
            let message: MessagePayload = serde_json::from_str(&json).ok()?;
            Some(HistoryMessage {
                message_id: message.message_id,
                role: message.role,
                text: message.text,
                reasoning: message.reasoning,
                model: message.model,
                tokens: message.tokens,
                ts: message.ts,
                media: message.media,
            })
        })
        .collect();
    messages.reverse();
    Ok(HistoryPage { messages, has_more })
}

/// One history entry: its stream id and the message.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    /// Stream entry id.
    pub entry_id: String,
    /// The stored message.
    pub message: MessagePayload,
}

/// The newest `limit` history entries of `chat_id` after `after` (exclusive), oldest first.
pub async fn recent<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    after: Option<&str>,
    limit: usize,
) -> redis::RedisResult<Vec<HistoryEntry>> {
    let reply: StreamRangeReply = newest_command(account, chat_id, after, limit)
        .query_async(conn)
        .await?;
    Ok(entries_of(reply))
}

/// The command reading the newest `limit` entries of `chat_id`'s history after entry
/// `after` (all, if `None`), newest first.
pub(crate) fn newest_command(
    account: &str,
    chat_id: &str,
    after: Option<&str>,
    limit: usize,
) -> redis::Cmd {
    let start = after.map_or_else(|| "-".to_owned(), |id| format!("({id}"));
    let mut command = redis::cmd("XREVRANGE");
    command
        .arg(AccountKeys::new(account).history(chat_id))
        .arg("+")
        .arg(start)
        .arg("COUNT")
        .arg(limit);
    command
}

/// The entries of an `XREVRANGE` reply, oldest first (entries that do not read as a
/// message are skipped).
pub(crate) fn entries_of(reply: StreamRangeReply) -> Vec<HistoryEntry> {
    let mut entries: Vec<HistoryEntry> = reply
        .ids
        .into_iter()
        .filter_map(|entry| {
            let json: String = entry.get(MESSAGE_FIELD)?;
            let message = serde_json::from_str(&json).ok()?;
            Some(HistoryEntry {
                entry_id: entry.id,
                message,
            })
        })
        .collect();
    entries.reverse();
    entries
}

/// The newest history entry id of `chat_id`, if any.
pub async fn last_entry_id<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<Option<String>> {
    Ok(recent(conn, account, chat_id, None, 1)
        .await?
        .pop()
        .map(|entry| entry.entry_id))
}

/// Removes `entry_ids` from `chat_id`'s history (the agent no longer sees them).
pub async fn forget<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    entry_ids: &[String],
) -> redis::RedisResult<()> {
    redis::cmd("XDEL")
        .arg(AccountKeys::new(account).history(chat_id))
        .arg(entry_ids)
        .query_async(conn)
        .await
}
