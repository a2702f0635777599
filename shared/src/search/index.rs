//! Writing the index: adding one message, and removing every message of a chat.

use redis::aio::ConnectionLike;
use redis::RedisResult;

use crate::keys::AccountKeys;
use crate::scripts;
use crate::search::record::{IndexedMessage, StoredRecord};
use crate::search::words::words;

/// Distinct words of one message that are indexed (the first ones); bounds the work and
/// the number of keys of one indexing step.
pub const MAX_WORDS_PER_MESSAGE: usize = 4096;
/// Latest timestamp a search ref can carry (13 digits of milliseconds: the year 2286);
/// later ones are indexed as this.
pub const MAX_REF_TS: u64 = 9_999_999_999_999;
/// Messages removed per script call by [`remove_chat`], so Redis is never blocked for long.
pub const REMOVE_BATCH: usize = 200;

/// Adds `message` to the search index of `account`, atomically. Idempotent: a message is
/// identified by its chat and message id, and indexing it again changes nothing (the first
/// indexed text stays).
pub async fn index_message<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    message: &IndexedMessage,
) -> RedisResult<()> {
    let _indexed_now: i64 = index_invocation(account, message)
        .invoke_async(conn)
        .await?;
    Ok(())
}

/// The script call that indexes `message`.
fn index_invocation(account: &str, message: &IndexedMessage) -> redis::ScriptInvocation<'static> {
    let mut invocation = scripts::SEARCH_INDEX.prepare_invoke();
    invocation.arg(&message.chat_id).arg(&message.message_id);
    add_index_arguments(&mut invocation, account, message);
    invocation
}

/// Adds to `invocation`, after its own keys and arguments, what `search_add.lua` takes to
/// index `message`: the index's four keys and one posting key per word; the ref's ts, the
/// record and the words.
pub(crate) fn add_index_arguments(
    invocation: &mut redis::ScriptInvocation<'_>,
    account: &str,
    message: &IndexedMessage,
) {
    let keys = AccountKeys::new(account);
    let record = serde_json::to_string(&StoredRecord::new(message))
        .expect("a stored record always serializes");
    let mut words = words(&message.text);
    words.truncate(MAX_WORDS_PER_MESSAGE);
    invocation
        .key(keys.search_next())
        .key(keys.search_docs())
        .key(keys.search_chat(&message.chat_id))
        .key(keys.search_lexicon())
        .arg(ref_ts(message.ts))
        .arg(record);
    for word in &words {
        invocation.key(keys.search_word(word)).arg(word);
    }
}

/// Removes every message of `chat_id` from the search index of `account` (for a deleted
/// channel) and returns how many there were. Works in atomic batches of [`REMOVE_BATCH`]
/// messages; messages indexed into the chat meanwhile are removed too.
pub async fn remove_chat<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
) -> RedisResult<u64> {
    let keys = AccountKeys::new(account);
    let mut removed_total = 0;
    loop {
        let (removed, remaining): (u64, u64) = scripts::SEARCH_REMOVE_CHAT
            .key(keys.search_chat(chat_id))
            .key(keys.search_docs())
            .key(keys.search_lexicon())
            .key(keys.search_terms())
            .key(keys.search_ids(chat_id))
            .arg(keys.search_word_prefix())
            .arg(REMOVE_BATCH)
            .arg(chat_id)
            .invoke_async(conn)
            .await?;
        removed_total += removed;
        if remaining == 0 || removed == 0 {
            return Ok(removed_total);
        }
    }
}

/// How a search ref starts: the message's ts, zero-padded to 13 digits, so that refs sort
/// by time as strings.
fn ref_ts(ts: u64) -> String {
    format!("{:013}", ts.min(MAX_REF_TS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_timestamps_sort_as_strings() {
        assert_eq!(ref_ts(42), "0000000000042");
        assert_eq!(ref_ts(1_700_000_000_000), "1700000000000");
        assert_eq!(ref_ts(u64::MAX), "9999999999999");
        assert!(ref_ts(999) < ref_ts(1_000));
    }
}
