//! Running a search: one Lua script call whose work is bounded by the limit and a cap.

use redis::aio::ConnectionLike;
use redis::RedisResult;

use crate::keys::AccountKeys;
use crate::protocol::server::SearchHit;
use crate::scripts;
use crate::search::query_terms::{query_terms, MAX_PREFIX_EXPANSIONS};
use crate::search::record::StoredRecord;

/// Work budget of one query: posting entries it reads from its driving (smallest) term
/// plus refs it looks up in the other terms. A query whose words rarely occur together may
/// run out of it with fewer than `limit` hits although older matches exist; this budget is
/// what keeps a query's cost independent of the history size.
pub const WORK_BUDGET: usize = 10_000;
/// Most hits one query returns, whatever the caller asks.
pub const MAX_LIMIT: usize = 200;
/// Largest page of candidates read and checked at once (pages start at the limit and
/// double up to this).
pub const MAX_PAGE: usize = 512;

/// Messages of `account` containing every word of `query` (words of two or more chars
/// also match as prefixes of indexed words), newest first, at most `limit` (capped at
/// [`MAX_LIMIT`]), only from `chat_filter` when given. Each hit's snippet shows the text
/// around its first match. One round trip, at most [`WORK_BUDGET`] posting entries touched.
pub async fn search<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    query: &str,
    chat_filter: Option<&str>,
    limit: usize,
) -> RedisResult<Vec<SearchHit>> {
    let terms = query_terms(query);
    let limit = limit.min(MAX_LIMIT);
    if terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let keys = AccountKeys::new(account);
    let mut invocation = scripts::SEARCH_QUERY.prepare_invoke();
    invocation
        .key(keys.search_docs())
        .key(keys.search_lexicon())
        .key(keys.search_chat(chat_filter.unwrap_or_default()))
        .arg(keys.search_word_prefix())
        .arg(limit)
        .arg(WORK_BUDGET)
        .arg(MAX_PREFIX_EXPANSIONS)
        .arg(if chat_filter.is_some() { "1" } else { "0" })
        .arg(MAX_PAGE);
    for term in &terms {
        invocation.arg(term.script_arg());
    }
    let (capped, records): (u8, Vec<String>) = invocation.invoke_async(conn).await?;
    if capped == 1 {
        tracing::debug!(
            account,
            hits = records.len(),
            "search ran out of its work budget ({WORK_BUDGET})"
        );
    }
    Ok(records
        .iter()
        .filter_map(|json| serde_json::from_str::<StoredRecord>(json).ok())
        .map(|record| record.into_hit(&terms))
        .collect())
}
