//! An account's channels and threads as stored in Redis (`iris:{a:A}:channels`), with each
//! chat's read marker merged in. Shared by gateways (pairing, validation) and workers
//! (channel changes).

use std::collections::HashMap;

use redis::aio::ConnectionLike;

use crate::keys::AccountKeys;
use crate::outbox::TURN_EFFECTS_TTL_SECS;
use crate::protocol::{Channel, ChannelKind, DEFAULT_CHAT_ID};
use crate::scripts;

/// Name of the channel every account starts with.
pub const DEFAULT_CHANNEL_NAME: &str = "General";
/// Longest channel name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The default channel as a new account gets it.
pub fn default_channel() -> Channel {
    Channel {
        chat_id: Some(DEFAULT_CHAT_ID.to_owned()),
        name: Some(DEFAULT_CHANNEL_NAME.to_owned()),
        kind: Some(ChannelKind::Default),
        is_default: Some(true),
        ..Default::default()
    }
}

/// A channel name as stored: trimmed, 1-64 characters, no control characters.
pub fn validate_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("a channel name cannot be empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "a channel name has at most {MAX_NAME_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("a channel name cannot contain control characters".into());
    }
    Ok(name.to_owned())
}

/// Chat id of created channel number `number`.
pub fn created_chat_id(kind: ChannelKind, number: u64) -> String {
    match kind {
        ChannelKind::Thread => format!("android:thr_{number}"),
        _ => format!("android:chan_{number}"),
    }
}

/// Orders channels for lists: the default first, then by creation.
fn list_order(channel: &Channel) -> (bool, u64, String) {
    let chat_id = channel.chat_id.clone().unwrap_or_default();
    let number = chat_id
        .rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (channel.is_default != Some(true), number, chat_id)
}

/// Every channel of `account` (creating the default one if missing), with read markers.
pub async fn list<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> redis::RedisResult<Vec<Channel>> {
    let keys = AccountKeys::new(account);
    let default_json = serde_json::to_string(&default_channel()).unwrap_or_default();
    let (_, stored, reads): ((), Vec<String>, HashMap<String, String>) = redis::pipe()
        .cmd("HSETNX")
        .arg(keys.channels())
        .arg(DEFAULT_CHAT_ID)
        .arg(default_json)
        .cmd("HVALS")
        .arg(keys.channels())
        .cmd("HGETALL")
        .arg(keys.reads())
        .query_async(conn)
        .await?;
    let mut channels: Vec<Channel> = stored
        .iter()
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect();
    for channel in &mut channels {
        let read = channel.chat_id.as_ref().and_then(|id| reads.get(id));
        channel.last_read_message_id = read
            .and_then(|marker| marker.split_once('|'))
            .map(|(_, message_id)| message_id.to_owned());
    }
    channels.sort_by_key(list_order);
    Ok(channels)
}

/// Whether `account` has chat `chat_id`: the default chat always does (it is created when
/// first listed), any other when it was created and not deleted. One `HEXISTS` at most.
pub async fn exists<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<bool> {
    if chat_id == DEFAULT_CHAT_ID {
        return Ok(true);
    }
    redis::cmd("HEXISTS")
        .arg(AccountKeys::new(account).channels())
        .arg(chat_id)
        .query_async(conn)
        .await
}

/// One channel of `account`, if it exists.
pub async fn get<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<Option<Channel>> {
    let stored: Option<String> = redis::cmd("HGET")
        .arg(AccountKeys::new(account).channels())
        .arg(chat_id)
        .query_async(conn)
        .await?;
    Ok(stored.and_then(|json| serde_json::from_str(&json).ok()))
}

/// Removes chat `chat_id` and what is kept for it: its channel, history, settings and
/// read marker, its history's renewal stamp (its search entries are [`crate::search`]'s to remove).
pub async fn delete<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> redis::RedisResult<()> {
    let keys = AccountKeys::new(account);
    redis::pipe()
        .cmd("HDEL")
        .arg(keys.channels())
        .arg(chat_id)
        .ignore()
        .cmd("DEL")
        .arg(keys.history(chat_id))
        .arg(keys.chat_settings(chat_id))
        .ignore()
        .cmd("HDEL")
        .arg(keys.reads())
        .arg(chat_id)
        .ignore()
        .cmd("HDEL")
        .arg(keys.outbox_meta())
        .arg(AccountKeys::history_renewed_field(chat_id))
        .ignore()
        .query_async(conn)
        .await
}

/// Stores `channel` (its read marker is kept apart and not stored here).
pub async fn put<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    channel: &Channel,
) -> redis::RedisResult<()> {
    let stored = Channel {
        last_read_message_id: None,
        ..channel.clone()
    };
    redis::cmd("HSET")
        .arg(AccountKeys::new(account).channels())
        .arg(stored.chat_id.as_deref().unwrap_or_default())
        .arg(serde_json::to_string(&stored).unwrap_or_default())
        .query_async(conn)
        .await
}

/// The number of the channel created by the request whose effects live at `effects_key`
/// (the same number every time that request is handled).
pub async fn claim_number<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    effects_key: &str,
) -> redis::RedisResult<u64> {
    scripts::CHANNEL_CLAIM
        .key(AccountKeys::new(account).channel_counter())
        .key(effects_key)
        .arg(TURN_EFFECTS_TTL_SECS)
        .invoke_async(conn)
        .await
}

/// Outcome of [`mark_read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMark {
    /// The marker moved to the message.
    Moved,
    /// The marker already was at or after it.
    Unchanged,
    /// No such message in that chat.
    UnknownMessage,
}

/// Moves the read marker of `chat_id` to `message_id`, never backwards.
pub async fn mark_read<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    message_id: &str,
) -> redis::RedisResult<ReadMark> {
    let keys = AccountKeys::new(account);
    let outcome: i64 = scripts::READ_MARK
        .key(keys.messages())
        .key(keys.reads())
        .arg(chat_id)
        .arg(message_id)
        .invoke_async(conn)
        .await?;
    Ok(match outcome {
        1 => ReadMark::Moved,
        0 => ReadMark::Unchanged,
        _ => ReadMark::UnknownMessage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_checked() {
        assert_eq!(validate_name("  Groceries "), Ok("Groceries".to_owned()));
        assert!(validate_name("   ").is_err());
        assert!(validate_name("a\u{7}b").is_err());
        assert!(validate_name(&"x".repeat(65)).is_err());
        assert!(validate_name(&"é".repeat(64)).is_ok());
    }

    #[test]
    fn lists_put_the_default_first_then_creation_order() {
        let channel = |id: &str, default| Channel {
            chat_id: Some(id.to_owned()),
            is_default: Some(default),
            ..Default::default()
        };
        let mut channels = [
            channel("android:chan_10", false),
            channel("android:chan_2", false),
            channel("android:default", true),
        ];
        channels.sort_by_key(list_order);
        let ids: Vec<_> = channels
            .iter()
            .filter_map(|c| c.chat_id.as_deref())
            .collect();
        assert_eq!(
            ids,
            ["android:default", "android:chan_2", "android:chan_10"]
        );
    }
}
