//! The cluster-wide half of the per-device push rate limit: `iris:{a:A}:push_window:<device>`,
//! set by the worker that pushes the device and expiring after `IRIS_PUSH_MIN_INTERVAL_MS`.
//! A worker about to push a device whose window another worker holds waits for it to end, so
//! a device gets at most one push per interval whichever workers handle its jobs. (Each
//! worker's own throttle merges the pushes that arrive inside a window into one.)

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::RedisResult;

use crate::keys::AccountKeys;

/// Takes the push window of `device_id` for `interval` as `holder`: `None` when taken (push
/// now), or how long the window someone else holds still lasts.
pub async fn claim_window<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
    holder: &str,
    interval: Duration,
) -> RedisResult<Option<Duration>> {
    let key = AccountKeys::new(account).push_window(device_id);
    let interval_ms = u64::try_from(interval.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    let (taken, left_ms): (Option<String>, i64) = redis::pipe()
        .cmd("SET")
        .arg(&key)
        .arg(holder)
        .arg("NX")
        .arg("PX")
        .arg(interval_ms)
        .cmd("PTTL")
        .arg(&key)
        .query_async(conn)
        .await?;
    Ok(match (taken, left_ms) {
        (Some(_), _) => None,
        // The other window ended between the two commands: try again at once.
        (None, -2) => Some(Duration::ZERO),
        // A window without expiry is not one this module wrote: wait one interval.
        (None, left) if left < 0 => Some(interval),
        (None, left) => Some(Duration::from_millis(left.unsigned_abs())),
    })
}
