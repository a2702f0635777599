//! Presence: which gateway nodes hold devices of an account.
//!
//! Each member of `iris:{a:A}:presence` is a node id scored with the time (ms) its hold
//! expires. Gateways renew their holds periodically; a node that dies simply stops
//! renewing and falls out, so presence needs no cleanup by anyone else.

use redis::aio::ConnectionLike;

use crate::expiring_set;
use crate::keys::AccountKeys;

/// How long a node's hold lasts without renewal.
pub const HOLD_TTL_MS: u64 = 30_000;
/// How often a gateway renews its holds (well inside [`HOLD_TTL_MS`]).
pub const RENEW_INTERVAL_MS: u64 = 10_000;

/// Records (or renews) that `node` holds devices of each of `accounts` until `until_ms`
/// (normally `now_ms + HOLD_TTL_MS`; a writer that may release holds later gives each write
/// a distinct `until_ms`, which is what [`release_hold`] compares).
pub async fn hold<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    accounts: &[String],
    now_ms: u64,
    until_ms: u64,
) -> redis::RedisResult<()> {
    if accounts.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    for account in accounts {
        let key = AccountKeys::new(account).presence();
        expiring_set::renew(&mut pipe, &key, [node], until_ms, now_ms, HOLD_TTL_MS * 2);
    }
    pipe.query_async(conn).await
}

/// Records that `node` no longer holds any device of `account`, if its hold is still the
/// one written with `until_ms`: a newer hold (a device came back meanwhile, its write sent
/// on another connection) stays, whichever of the two reaches Redis first. Returns whether
/// the hold was removed.
pub async fn release_hold<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    account: &str,
    until_ms: u64,
) -> redis::RedisResult<bool> {
    let removed: i64 = crate::scripts::PRESENCE_RELEASE
        .key(AccountKeys::new(account).presence())
        .arg(node)
        .arg(until_ms)
        .invoke_async(conn)
        .await?;
    Ok(removed == 1)
}

/// Nodes currently holding devices of `account`.
pub async fn nodes<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    now_ms: u64,
) -> redis::RedisResult<Vec<String>> {
    expiring_set::live_members(conn, &AccountKeys::new(account).presence(), now_ms).await
}
