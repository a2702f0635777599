//! The cluster epoch: a random value in Redis that tells a node whether the Redis it talks
//! to still holds the data it talked to before.
//!
//! The first node creates `iris:epoch` (`SET NX`); every node remembers the value it saw
//! and checks it again after reconnecting and periodically. A missing key (FLUSHALL, a new
//! empty instance, a replica promoted without the data) or a different value means the
//! cluster's state was lost: the check rewrites the key in the same command, so every node
//! sees one new epoch, and the caller resets what it derived from the old data.

use redis::aio::ConnectionLike;

use crate::keys;

/// How often nodes re-check the epoch while Redis is reachable.
pub const CHECK_INTERVAL_MS: u64 = 2_000;

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EpochCheck {
    /// The epoch is the one this node knew (or the node knew none and adopted it).
    Unchanged(String),
    /// The epoch this node knew is gone: Redis lost the cluster's data.
    Lost {
        /// The epoch the node had seen.
        was: String,
        /// The epoch now in Redis.
        now: String,
    },
}

/// A fresh epoch value: creation time and randomness, so two are never equal.
fn fresh_epoch(now_ms: u64) -> String {
    format!("{now_ms}-{:016x}", rand::random::<u64>())
}

/// Reads the epoch, creating it if it is missing, and compares it with `known`.
pub async fn check<C: ConnectionLike + Send>(
    conn: &mut C,
    known: Option<&str>,
    now_ms: u64,
) -> redis::RedisResult<EpochCheck> {
    let candidate = fresh_epoch(now_ms);
    // One command sets the key only if absent and returns what was there before.
    let previous: Option<String> = redis::cmd("SET")
        .arg(keys::cluster_epoch())
        .arg(&candidate)
        .arg("NX")
        .arg("GET")
        .query_async(conn)
        .await?;
    let current = previous.unwrap_or(candidate);
    Ok(match known {
        Some(was) if was != current => EpochCheck::Lost {
            was: was.to_owned(),
            now: current,
        },
        _ => EpochCheck::Unchanged(current),
    })
}
