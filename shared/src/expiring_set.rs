//! An expiring set: a sorted set whose members are scored with the time (ms) their claim
//! expires. Holders renew their claims; a holder that dies stops renewing and its members
//! fall out, so nobody else needs to clean up. Each renewal also trims expired members and
//! lets the whole key expire a while after its last renewal. Presence (gateway nodes of an
//! account) and online devices are such sets.

use redis::aio::ConnectionLike;
use redis::{Pipeline, RedisResult};

/// Adds to `pipe` the renewal of `members` of the set at `key` until `until_ms`, the trim of
/// members expired at `now_ms`, and the key's expiry `key_ttl_ms` from now.
pub fn renew<'a>(
    pipe: &mut Pipeline,
    key: &str,
    members: impl IntoIterator<Item = &'a str>,
    until_ms: u64,
    now_ms: u64,
    key_ttl_ms: u64,
) {
    let zadd = pipe.cmd("ZADD").arg(key);
    for member in members {
        zadd.arg(until_ms).arg(member);
    }
    zadd.ignore()
        .cmd("ZREMRANGEBYSCORE")
        .arg(key)
        .arg("-inf")
        .arg(now_ms)
        .ignore()
        .cmd("PEXPIRE")
        .arg(key)
        .arg(key_ttl_ms)
        .ignore();
}

/// Members of the set at `key` whose claim has not expired at `now_ms`.
pub async fn live_members<C, T>(conn: &mut C, key: &str, now_ms: u64) -> RedisResult<T>
where
    C: ConnectionLike + Send,
    T: redis::FromRedisValue,
{
    redis::cmd("ZRANGEBYSCORE")
        .arg(key)
        .arg(format!("({now_ms}"))
        .arg("+inf")
        .query_async(conn)
        .await
}

/// Drops `member`'s claim at once.
pub async fn remove<C: ConnectionLike + Send>(
    conn: &mut C,
    key: &str,
    member: &str,
) -> RedisResult<()> {
    redis::cmd("ZREM")
        .arg(key)
        .arg(member)
        .query_async(conn)
        .await
}
