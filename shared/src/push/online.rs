//! Online devices: which devices of an account have a live session right now. A device
//! that is online gets its frames over its WebSocket, so it is never pushed.
//!
//! Each member of `iris:{a:A}:online` is a device id scored with the time (ms) its claim
//! expires. Gateways call [`mark_online`] at pairing and every [`ONLINE_RENEW_MS`] for each
//! live device, and [`mark_offline`] when a device's last session closes. A gateway that
//! dies simply stops renewing and its devices fall out after [`ONLINE_TTL_MS`], so nobody
//! else needs to clean up.

use std::collections::HashSet;

use redis::aio::ConnectionLike;
use redis::RedisResult;

use crate::expiring_set;
use crate::keys::AccountKeys;

/// How long a device counts as online without renewal.
pub const ONLINE_TTL_MS: u64 = 30_000;
/// How often gateways renew their live devices (well inside [`ONLINE_TTL_MS`]).
pub const ONLINE_RENEW_MS: u64 = 10_000;
/// The whole set expires this long after its last renewal, so an account whose devices all
/// went away leaves nothing behind.
const KEY_TTL_MS: u64 = ONLINE_TTL_MS * 2;

/// Records (or renews) that `device_id` has a live session at `now_ms`.
pub async fn mark_online<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
    now_ms: u64,
) -> RedisResult<()> {
    let claim = [(account.to_owned(), vec![device_id.to_owned()])];
    renew_online(conn, &claim, now_ms).await
}

/// Most accounts renewed per pipeline by [`renew_online`] (bounds one reply's size).
const RENEW_BATCH: usize = 1_000;

/// Renews every `(account, device ids)` claim at `now_ms`: per account one `ZADD` of all
/// its devices plus the trim and the expiry, pipelined [`RENEW_BATCH`] accounts at a time,
/// so a node's renewal costs a few round trips whatever its number of devices.
pub async fn renew_online<C: ConnectionLike + Send>(
    conn: &mut C,
    devices_by_account: &[(String, Vec<String>)],
    now_ms: u64,
) -> RedisResult<()> {
    for batch in devices_by_account.chunks(RENEW_BATCH) {
        let mut pipe = redis::pipe();
        for (account, devices) in batch {
            if devices.is_empty() {
                continue;
            }
            let key = AccountKeys::new(account).online_devices();
            let until_ms = now_ms + ONLINE_TTL_MS;
            let members = devices.iter().map(String::as_str);
            expiring_set::renew(&mut pipe, &key, members, until_ms, now_ms, KEY_TTL_MS);
        }
        pipe.query_async::<()>(conn).await?;
    }
    Ok(())
}

/// Records that `device_id` no longer has a live session.
pub async fn mark_offline<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
) -> RedisResult<()> {
    expiring_set::remove(conn, &AccountKeys::new(account).online_devices(), device_id).await
}

/// Devices of `account` whose live-session claim has not expired at `now_ms`.
pub async fn online_devices<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    now_ms: u64,
) -> RedisResult<HashSet<String>> {
    let key = AccountKeys::new(account).online_devices();
    expiring_set::live_members(conn, &key, now_ms).await
}
