//! Partition leases with fencing tokens, and the registry of live workers.
//!
//! Exactly one worker holds a partition's lease at a time. Each acquisition of a free lease
//! issues a fencing token larger than every earlier one; the holder writes with it, and a
//! chat's fence (see `fence_claim.lua`) refuses writes from any older token, so a worker
//! that lost its lease but has not noticed yet cannot write over its successor.

use redis::aio::ConnectionLike;

use crate::keys;
use crate::outbox::OUTBOX_RETENTION_SECS;
use crate::partition::Partition;
use crate::{keys::AccountKeys, scripts};

/// A lease this node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldLease {
    /// The leased partition.
    pub partition: Partition,
    /// Fencing token issued with it.
    pub fence: u64,
}

fn holder_value(node: &str, fence: u64) -> String {
    format!("{node}|{fence}")
}

/// A pipeline that first loads `script`, so the calls of it added next run even on a
/// Redis that has not seen it (first use, or restarted): a lease keeper's tick must not
/// fail for that. The load is part of the same round trip.
fn pipeline_running(script: &redis::Script) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.load_script(script).ignore();
    pipe
}

/// Takes each of `partitions` that is free (or extends those `node` holds already), in one
/// round trip; returns the leases obtained, in the order asked.
pub async fn acquire_each<C: ConnectionLike + Send>(
    conn: &mut C,
    partitions: &[Partition],
    node: &str,
    ttl_ms: u64,
) -> redis::RedisResult<Vec<HeldLease>> {
    if partitions.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = pipeline_running(&scripts::LEASE_ACQUIRE);
    for &partition in partitions {
        pipe.invoke_script(
            scripts::LEASE_ACQUIRE
                .key(keys::lease(partition))
                .key(keys::lease_fence(partition))
                .arg(node)
                .arg(ttl_ms),
        );
    }
    let fences: Vec<u64> = pipe.query_async(conn).await?;
    Ok(partitions
        .iter()
        .zip(fences)
        .filter(|&(_, fence)| fence > 0)
        .map(|(&partition, fence)| HeldLease { partition, fence })
        .collect())
}

/// Extends every held lease in one round trip (so a node's renewal takes the same time
/// whatever number of partitions it holds); each answer says whether that lease is still
/// held, in the order given.
///
/// One `GETEX … PX` per lease: it reads the holder and extends the lease in one atomic
/// command, so the holder read is the one extended. A lease found held by another node
/// (this one's ran out and was taken) is extended for that node too, once: its holder
/// renews it anyway, and this node never renews it again.
pub async fn renew_each<C: ConnectionLike + Send>(
    conn: &mut C,
    leases: &[HeldLease],
    node: &str,
    ttl_ms: u64,
) -> redis::RedisResult<Vec<bool>> {
    if leases.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for lease in leases {
        pipe.cmd("GETEX")
            .arg(keys::lease(lease.partition))
            .arg("PX")
            .arg(ttl_ms);
    }
    let holders: Vec<Option<String>> = pipe.query_async(conn).await?;
    Ok(leases
        .iter()
        .zip(holders)
        .map(|(lease, holder)| holder.as_deref() == Some(&*holder_value(node, lease.fence)))
        .collect())
}

/// Gives every held lease in `leases` up, in one round trip.
pub async fn release_each<C: ConnectionLike + Send>(
    conn: &mut C,
    leases: &[HeldLease],
    node: &str,
) -> redis::RedisResult<()> {
    if leases.is_empty() {
        return Ok(());
    }
    let mut pipe = pipeline_running(&scripts::LEASE_RELEASE);
    for lease in leases {
        pipe.invoke_script(
            scripts::LEASE_RELEASE
                .key(keys::lease(lease.partition))
                .arg(holder_value(node, lease.fence)),
        )
        .ignore();
    }
    pipe.query_async::<()>(conn).await
}

/// Whether `node` still holds `lease` (same fencing token).
pub async fn holds<C: ConnectionLike + Send>(
    conn: &mut C,
    lease: HeldLease,
    node: &str,
) -> redis::RedisResult<bool> {
    let holder: Option<String> = redis::cmd("GET")
        .arg(keys::lease(lease.partition))
        .query_async(conn)
        .await?;
    Ok(holder.as_deref() == Some(holder_value(node, lease.fence).as_str()))
}

/// Tells every worker that leases were given up, so they take the free partitions now
/// rather than at their next periodic tick.
pub async fn announce_released<C: ConnectionLike + Send>(conn: &mut C) -> redis::RedisResult<()> {
    redis::cmd("PUBLISH")
        .arg(keys::leases_released())
        .arg("1")
        .query_async(conn)
        .await
}

/// Raises the fence of `chat_id` to `fence`; `false` means a newer owner already wrote.
pub async fn claim_chat<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    fence: u64,
) -> redis::RedisResult<bool> {
    let keys = AccountKeys::new(account);
    let claimed: u8 = scripts::FENCE_CLAIM
        .key(keys.outbox_meta())
        .key(keys.legacy_chat_fence(chat_id))
        .arg(fence)
        .arg(OUTBOX_RETENTION_SECS)
        .arg(AccountKeys::chat_fence_field(chat_id))
        .invoke_async(conn)
        .await?;
    Ok(claimed == 1)
}

/// What a worker's heartbeat learned about the live workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Workers alive now, this one included.
    pub alive: usize,
    /// When the soonest-expiring other worker stops counting as alive unless it renews
    /// (epoch ms): a dead worker's partitions can be taken from then on.
    pub next_peer_expiry_ms: Option<u64>,
}

/// Announces that worker `node` is alive until `expires_ms`, drops workers whose own
/// announcement ran out, and says how many are alive and when the next other one lapses.
pub async fn heartbeat<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    now_ms: u64,
    expires_ms: u64,
) -> redis::RedisResult<Liveness> {
    let (_, _, alive, soonest): ((), (), usize, Vec<(String, u64)>) = redis::pipe()
        .cmd("ZADD")
        .arg(keys::workers())
        .arg(expires_ms)
        .arg(node)
        .cmd("ZREMRANGEBYSCORE")
        .arg(keys::workers())
        .arg("-inf")
        .arg(now_ms)
        .cmd("ZCARD")
        .arg(keys::workers())
        // The two soonest: one of them may be this worker.
        .cmd("ZRANGE")
        .arg(keys::workers())
        .arg(0)
        .arg(1)
        .arg("WITHSCORES")
        .query_async(conn)
        .await?;
    let next_peer_expiry_ms = soonest
        .into_iter()
        .find(|(member, _)| member != node)
        .map(|(_, expires)| expires);
    Ok(Liveness {
        alive,
        next_peer_expiry_ms,
    })
}

/// Removes worker `node` from the live set (on orderly shutdown).
pub async fn leave<C: ConnectionLike + Send>(conn: &mut C, node: &str) -> redis::RedisResult<()> {
    redis::cmd("ZREM")
        .arg(keys::workers())
        .arg(node)
        .query_async(conn)
        .await
}
