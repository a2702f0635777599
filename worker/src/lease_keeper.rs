//! The lease keeper actor: keeps this worker's fair share of partition leases.
//!
//! Every tick it announces the worker as alive, renews the leases it holds, and moves
//! towards `ceil(partitions / live workers)` leases: taking free partitions in this node's
//! rendezvous order (so each worker prefers different partitions and assignments stay
//! stable), or giving up its least-preferred ones when workers join. Owned partitions and
//! their fencing tokens are published on a watch channel for the inbox reader.
//! After a failed tick the next ones wait out an exponential backoff, so a Redis outage
//! is not hit every quarter lease.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::prelude::*;
use iris_shared::redis_conn::Pool;
use tokio::sync::watch;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::lease::{self, HeldLease};
use iris_shared::partition::Partition;

use crate::inbox::Owned;

/// Ticks per lease lifetime: a lease is renewed several times before it could expire.
const TICKS_PER_TTL: u32 = 4;

/// Gives every lease up and leaves the worker set (orderly shutdown).
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct ReleaseAll;

/// Redis lost the cluster's data: the held leases (and their fences) are gone, so they
/// are dropped at once and acquired afresh on the next tick.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct ForgetLeases;

/// Holds this worker's leases.
pub struct LeaseKeeper {
    node_id: String,
    partitions: u32,
    ttl: Duration,
    redis: Pool,
    held: HashMap<Partition, HeldLease>,
    /// When the held leases were last renewed successfully; past a TTL they count as lost.
    last_renewed: Instant,
    owned: watch::Sender<Owned>,
    /// Pacing of ticks after failures.
    backoff: Backoff,
    /// No tick before this (set after a failure).
    retry_at: Option<Instant>,
}

impl LeaseKeeper {
    /// A keeper for `partitions` partitions with leases of `ttl`.
    pub fn new(
        node_id: String,
        partitions: u32,
        ttl: Duration,
        redis: Pool,
        owned: watch::Sender<Owned>,
    ) -> Self {
        Self {
            node_id,
            partitions,
            ttl,
            redis,
            held: HashMap::new(),
            last_renewed: Instant::now(),
            owned,
            backoff: Backoff::default(),
            retry_at: None,
        }
    }

    fn publish_owned(&self) {
        let owned: Owned = self.held.values().map(|l| (l.partition, l.fence)).collect();
        self.owned.send_if_modified(|current| {
            let changed = *current != owned;
            *current = owned;
            changed
        });
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.retry_at.is_some_and(|at| Instant::now() < at) {
            return;
        }
        let state = TickInput {
            node_id: self.node_id.clone(),
            partitions: self.partitions,
            ttl_ms: self.ttl.as_millis() as u64,
            held: self.held.values().copied().collect(),
        };
        let redis = self.redis.clone();
        ctx.wait(
            async move { run_tick(&redis, state).await }
                .into_actor(self)
                .map(|result, act, _ctx| match result {
                    Ok(held) => {
                        act.held = held.into_iter().map(|l| (l.partition, l)).collect();
                        act.last_renewed = Instant::now();
                        act.backoff.reset();
                        act.retry_at = None;
                        act.publish_owned();
                    }
                    Err(err) => {
                        tracing::warn!(%err, "lease tick failed");
                        act.retry_at = Some(Instant::now() + act.backoff.next_delay());
                        if act.last_renewed.elapsed() >= act.ttl && !act.held.is_empty() {
                            tracing::warn!("leases not renewed within their TTL; giving them up");
                            act.held.clear();
                            act.publish_owned();
                        }
                    }
                }),
        );
    }
}

struct TickInput {
    node_id: String,
    partitions: u32,
    ttl_ms: u64,
    held: Vec<HeldLease>,
}

/// This node's preference for `partition` (rendezvous hashing).
fn preference(node_id: &str, partition: Partition) -> u64 {
    let key = format!("{partition}");
    u64::from(iris_shared::partition::partition_of(
        node_id,
        &key,
        u32::MAX,
    ))
}

async fn run_tick(redis: &Pool, input: TickInput) -> Result<Vec<HeldLease>, String> {
    let mut conn = redis.get().await.map_err(|e| e.to_string())?;
    let now = now_ms();
    let alive = lease::heartbeat(&mut conn, &input.node_id, now, now + input.ttl_ms)
        .await
        .map_err(|e| e.to_string())?;
    let target = (input.partitions as usize).div_ceil(alive.max(1));

    let mut held = Vec::with_capacity(input.held.len());
    for lease in input.held {
        if lease::renew(&mut conn, lease, &input.node_id, input.ttl_ms)
            .await
            .map_err(|e| e.to_string())?
        {
            held.push(lease);
        } else {
            tracing::warn!(partition = lease.partition, "lease lost");
        }
    }

    held.sort_by_key(|l| std::cmp::Reverse(preference(&input.node_id, l.partition)));
    while held.len() > target {
        let Some(extra) = held.pop() else { break };
        lease::release(&mut conn, extra, &input.node_id)
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!(
            partition = extra.partition,
            "partition handed over for balance"
        );
    }

    if held.len() < target {
        let mut candidates: Vec<Partition> = (0..input.partitions)
            .filter(|p| !held.iter().any(|l| l.partition == *p))
            .collect();
        candidates.sort_by_key(|&p| std::cmp::Reverse(preference(&input.node_id, p)));
        for partition in candidates {
            if held.len() >= target {
                break;
            }
            if let Some(lease) = lease::acquire(&mut conn, partition, &input.node_id, input.ttl_ms)
                .await
                .map_err(|e| e.to_string())?
            {
                tracing::info!(partition, fence = lease.fence, "partition acquired");
                held.push(lease);
            }
        }
    }
    Ok(held)
}

impl Actor for LeaseKeeper {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.tick(ctx);
        ctx.run_interval(self.ttl / TICKS_PER_TTL, Self::tick);
    }
}

impl Handler<ForgetLeases> for LeaseKeeper {
    type Result = ();

    fn handle(&mut self, _msg: ForgetLeases, _ctx: &mut Self::Context) {
        self.held.clear();
        self.publish_owned();
        self.retry_at = None;
    }
}

impl Handler<ReleaseAll> for LeaseKeeper {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: ReleaseAll, _ctx: &mut Self::Context) -> Self::Result {
        let held: Vec<HeldLease> = self.held.drain().map(|(_, l)| l).collect();
        self.publish_owned();
        let redis = self.redis.clone();
        let node_id = self.node_id.clone();
        Box::pin(
            async move {
                let Ok(mut conn) = redis.get().await else {
                    return;
                };
                for lease in held {
                    let _ = lease::release(&mut conn, lease, &node_id).await;
                }
                let _ = lease::leave(&mut conn, &node_id).await;
            }
            .into_actor(self),
        )
    }
}
