//! A chat's settings (`iris:{a:A}:settings:<chat>`): its model, reasoning display, where
//! the conversation starts after `/new`, and its busy policy. Written by the worker's slash
//! commands and pickers, read with every turn.

use std::collections::HashMap;

use redis::aio::ConnectionLike;

use crate::keys::AccountKeys;

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
pub async fn load<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<ChatSettings> {
    let fields: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(account).chat_settings(chat_id))
        .query_async(conn)
        .await?;
    Ok(ChatSettings::from_fields(&fields))
}

impl ChatSettings {
    pub(crate) fn from_fields(fields: &HashMap<String, String>) -> Self {
        Self {
            model: fields.get(MODEL).cloned().filter(|m| !m.is_empty()),
            show_reasoning: fields.get(REASONING).is_none_or(|v| v != "off"),
            context_from: fields.get(CONTEXT_FROM).cloned(),
            busy_policy: fields.get(BUSY_POLICY).cloned(),
        }
    }
}

/// Sets one settings field of `chat_id`.
pub async fn store<C: ConnectionLike + Send>(
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
