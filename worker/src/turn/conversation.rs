//! What a chat remembers between turns, in Redis: its settings (model, reasoning display,
//! where the conversation starts after `/new`) and its history, read back as the
//! conversation an upstream agent is given.

use std::collections::HashMap;

use redis::aio::ConnectionLike;
use redis::streams::StreamRangeReply;

use iris_shared::keys::AccountKeys;
use iris_shared::partition::Partition;
use iris_shared::protocol::{MessagePayload, Role};
use iris_shared::user_message;

use crate::agent::ChatMessage;

/// Most earlier messages sent to the upstream with a turn.
pub const CONVERSATION_LIMIT: usize = 50;

/// Settings field: the chat's model.
pub const MODEL: &str = "model";
/// Settings field: whether answers show their reasoning (`on`/`off`).
pub const REASONING: &str = "reasoning";
/// Settings field: history entry id after which the current conversation starts.
pub const CONTEXT_FROM: &str = "context_from";
/// Settings field: the chat's busy policy (`queue`, `interrupt`, `steer`).
pub const BUSY_POLICY: &str = "busy";

/// A chat's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatSettings {
    /// Model chosen for the chat.
    pub model: Option<String>,
    /// Whether answers carry their reasoning (default on).
    pub show_reasoning: bool,
    /// The conversation starts after this history entry (set by `/new`).
    pub context_from: Option<String>,
    /// The chat's own busy policy, by name (set by `/busy`).
    pub busy_policy: Option<String>,
}

/// Reads the settings of `chat_id`.
pub async fn load_settings<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<ChatSettings> {
    let fields: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(account).chat_settings(chat_id))
        .query_async(conn)
        .await?;
    Ok(ChatSettings {
        model: fields.get(MODEL).cloned().filter(|m| !m.is_empty()),
        show_reasoning: fields.get(REASONING).is_none_or(|v| v != "off"),
        context_from: fields.get(CONTEXT_FROM).cloned(),
        busy_policy: fields.get(BUSY_POLICY).cloned(),
    })
}

/// Sets one settings field of `chat_id`.
pub async fn store_setting<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    field: &str,
    value: &str,
) -> redis::RedisResult<()> {
    redis::cmd("HSET")
        .arg(AccountKeys::new(account).chat_settings(chat_id))
        .arg(field)
        .arg(value)
        .query_async(conn)
        .await
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
pub async fn recent_history<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    after: Option<&str>,
    limit: usize,
) -> redis::RedisResult<Vec<HistoryEntry>> {
    let start = after.map_or_else(|| "-".to_owned(), |id| format!("({id}"));
    let reply: StreamRangeReply = redis::cmd("XREVRANGE")
        .arg(AccountKeys::new(account).history(chat_id))
        .arg("+")
        .arg(start)
        .arg("COUNT")
        .arg(limit)
        .query_async(conn)
        .await?;
    let mut entries: Vec<HistoryEntry> = reply
        .ids
        .into_iter()
        .filter_map(|entry| {
            let json: String = entry.get("m")?;
            let message = serde_json::from_str(&json).ok()?;
            Some(HistoryEntry {
                entry_id: entry.id,
                message,
            })
        })
        .collect();
    entries.reverse();
    Ok(entries)
}

/// The newest history entry id of `chat_id`, if any.
pub async fn last_history_id<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<Option<String>> {
    Ok(recent_history(conn, account, chat_id, None, 1)
        .await?
        .pop()
        .map(|entry| entry.entry_id))
}

/// The conversation an upstream is given: user and assistant messages with text, except
/// those of the turn being run (a turn replayed after a takeover already has its own user
/// message in history).
pub fn as_conversation(
    entries: &[HistoryEntry],
    partition: Partition,
    entry_id: &str,
) -> Vec<ChatMessage> {
    let own = [
        user_message::user_message_id(partition, entry_id),
        user_message::answer_message_id(partition, entry_id),
    ];
    // A user message of a later inbound entry of the chat is shown already but waits for
    // its own turn (queued behind this one): not part of this turn's conversation.
    let later = |id: &str| {
        user_message::entry_of_user_message(id).is_some_and(|(p, entry)| {
            p == partition && user_message::entry_is_after(entry, entry_id)
        })
    };
    entries
        .iter()
        .filter(|entry| {
            let id = entry.message.message_id.as_deref().unwrap_or_default();
            !own.iter().any(|own| own == id) && !later(id)
        })
        .filter_map(|entry| {
            let role = match entry.message.role {
                Some(Role::User) => "user",
                Some(Role::Assistant) => "assistant",
                _ => return None,
            };
            let content = entry.message.text.clone().filter(|t| !t.is_empty())?;
            Some(ChatMessage {
                role: role.to_owned(),
                content,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, role: Role, text: &str) -> HistoryEntry {
        HistoryEntry {
            entry_id: format!("{id}-0"),
            message: MessagePayload {
                message_id: Some(id.to_owned()),
                role: Some(role),
                text: Some(text.to_owned()),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_conversation_keeps_user_and_assistant_text_in_order() {
        let entries = [
            entry("u1-1-0", Role::User, "hi"),
            entry("a1-1-0", Role::Assistant, "hello"),
            entry("s1-1-0", Role::System, "note"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        let roles: Vec<_> = conversation.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant"]);
    }

    #[test]
    fn the_running_turn_s_own_messages_are_left_out() {
        let entries = [
            entry("u1-1-0", Role::User, "hi"),
            entry("u1-2-0", Role::User, "again"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        assert_eq!(conversation.len(), 1);
        assert_eq!(conversation[0].content, "hi");
    }

    #[test]
    fn messages_queued_behind_the_turn_are_left_out_but_an_interrupted_answer_stays() {
        // u1-3-0 was sent (and shown) while turn 2-0 ran; the partial answer to the turn
        // before it was written after both.
        let entries = [
            entry("u1-1-0", Role::User, "first"),
            entry("u1-2-0", Role::User, "second"),
            entry("u1-3-0", Role::User, "third"),
            entry("a1-1-0", Role::Assistant, "partial first answer"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        let texts: Vec<_> = conversation.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["first", "partial first answer"]);
    }
}
