//! Sent markers: `iris:{a:A}:pushed:<device>:<seq>`, one per push, so that a job handled
//! twice (a dispatcher took over another's pending jobs, or a job was re-read after a
//! crash) pushes each device once.
//!
//! The marker is claimed *before* sending: a push is sent at most once. A dispatcher that
//! dies between claiming and sending loses that notification, which is the cheaper failure
//! for a wake-up signal (the device still syncs everything on its next connection) than
//! pushing twice.

use redis::aio::ConnectionLike;
use redis::RedisResult;

use crate::keys::AccountKeys;

/// How long a sent marker is kept: far longer than any job stays pending.
pub const PUSHED_TTL_SECS: u64 = 86_400;

/// Claims the push of outbox `seq` to `device_id`: `true` if this caller is the first and
/// must send it, `false` if it was already claimed.
pub async fn claim_send<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
    seq: u64,
) -> RedisResult<bool> {
    let set: Option<String> = redis::cmd("SET")
        .arg(AccountKeys::new(account).pushed(device_id, seq))
        .arg("1")
        .arg("NX")
        .arg("EX")
        .arg(PUSHED_TTL_SECS)
        .query_async(conn)
        .await?;
    Ok(set.is_some())
}
