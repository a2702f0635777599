//! The lease keeper actor: keeps this worker's fair share of partition leases.
//!
//! Every tick it announces the worker as alive, renews the leases it holds, and moves
//! towards `ceil(partitions / live workers)` leases: taking free partitions in this node's
//! rendezvous order (so each worker prefers different partitions and assignments stay
//! stable), or giving up its least-preferred ones when workers join. Owned partitions and
//! their fencing tokens are published on a watch channel for the inbox reader.
//!
//! It ticks every quarter lease lifetime, at once when another worker announces that it
//! gave leases up ([`Rescan`], from `lease_watch`), so released partitions move in
//! milliseconds, and just after a silent worker's announcement lapses, so a dead worker's
//! partitions move when its leases run out rather than up to a tick later. A lease found lost (it expired while this worker was paused or cut off)
//! makes the directory stop that partition's chats. On drain ([`BeginDrain`]) the keeper
//! leaves the worker set, stops taking partitions and hides them from the inbox reader,
//! but keeps renewing what it holds until [`ReleaseAll`].
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

use crate::chat::directory::PartitionsLost;
use crate::metrics;
use crate::partitions::inbox::Owned;
use crate::partitions::lease_confirmations::LeaseConfirmations;

/// Ticks per lease lifetime: a lease is renewed several times before it could expire.
const TICKS_PER_TTL: u32 = 4;
/// How long after a silent worker's announcement lapses the extra tick comes (its leases,
/// renewed a moment before the announcement, have run out by then).
const PEER_LAPSE_MARGIN: Duration = Duration::from_millis(5);

/// Gives every lease up, leaves the worker set and tells the other workers (orderly
/// shutdown).
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct ReleaseAll;

/// Starts a drain: leave the worker set (so the others aim to take everything), take no
/// more partitions, stop the inbox reader, and keep renewing held leases meanwhile.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct BeginDrain;

/// Another worker gave leases up: look for free partitions now.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Rescan;
/// Redis lost the cluster's data: the held leases (and their fences) are gone, so they
/// are dropped at once and acquired afresh on the next tick.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct ForgetLeases(pub iris_shared::cluster_epoch::LostScope);

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
    /// Until when each held lease is surely this worker's, for the inbox.
    confirmations: LeaseConfirmations,
    /// Told which partitions were lost, to stop their chats.
    lost: Recipient<PartitionsLost>,
    /// Set by [`BeginDrain`]: renew only.
    draining: bool,
    /// A tick is running; another asked for meanwhile waits for it (ticks work from a
    /// snapshot of the held leases, so two at once would both report the same loss).
    ticking: bool,
    /// Another tick was asked for while one ran.
    tick_again: bool,
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
        confirmations: LeaseConfirmations,
        lost: Recipient<PartitionsLost>,
    ) -> Self {
        Self {
            node_id,
            partitions,
            ttl,
            redis,
            held: HashMap::new(),
            last_renewed: Instant::now(),
            owned,
            confirmations,
            lost,
            draining: false,
            ticking: false,
            tick_again: false,
            backoff: Backoff::default(),
            retry_at: None,
        }
    }

    /// Tells the inbox reader what to read: nothing once draining.
    fn publish_owned(&self) {
        let owned: Owned = if self.draining {
            Owned::new()
        } else {
            self.held.values().map(|l| (l.partition, l.fence)).collect()
        };
        metrics::set(&metrics::get().partitions_owned, self.held.len() as i64);
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
        if self.ticking {
            self.tick_again = true;
            return;
        }
        self.ticking = true;
        let state = TickInput {
            node_id: self.node_id.clone(),
            partitions: self.partitions,
            ttl_ms: self.ttl.as_millis() as u64,
            held: self.held.values().copied().collect(),
            draining: self.draining,
            confirmations: self.confirmations.clone(),
        };
        let redis = self.redis.clone();
        ctx.wait(
            async move { run_tick(&redis, state).await }
                .into_actor(self)
                .map(|result, act, ctx| {
                    act.ticking = false;
                    if let Ok(outcome) = &result {
                        act.watch_peer_expiry(outcome.next_peer_expiry_ms, ctx);
                    }
                    act.apply_tick(result);
                    if std::mem::take(&mut act.tick_again) {
                        act.tick(ctx);
                    }
                }),
        );
    }

    /// A live worker renews its announcement every tick, so its expiry stays most of a
    /// lease lifetime ahead. One that lapses before this worker's next regular tick has
    /// stopped renewing (it died): tick once just after it lapses, so its partitions are
    /// taken when its leases run out (they were renewed just before its announcement),
    /// not up to a tick later.
    fn watch_peer_expiry(&mut self, next_peer_expiry_ms: Option<u64>, ctx: &mut Context<Self>) {
        let Some(expiry_ms) = next_peer_expiry_ms else {
            return;
        };
        let until = Duration::from_millis(expiry_ms.saturating_sub(now_ms()));
        if until < self.ttl / TICKS_PER_TTL {
            ctx.run_later(until + PEER_LAPSE_MARGIN, Self::tick);
        }
    }

    fn apply_tick(&mut self, result: Result<TickOutcome, String>) {
        match result {
            Ok(outcome) => {
                self.held = outcome.held.into_iter().map(|l| (l.partition, l)).collect();
                self.last_renewed = Instant::now();
                self.backoff.reset();
                self.retry_at = None;
                self.publish_owned();
                self.report_lost(outcome.lost);
            }
            Err(err) => {
                metrics::incr(&metrics::get().redis_errors_total);
                tracing::warn!(%err, "lease tick failed");
                self.retry_at = Some(Instant::now() + self.backoff.next_delay());
                if self.last_renewed.elapsed() >= self.ttl && !self.held.is_empty() {
                    tracing::warn!("leases not renewed within their TTL; giving them up");
                    let lost: Vec<Partition> = self.held.keys().copied().collect();
                    self.confirmations.withdraw(lost.iter().copied());
                    self.held.clear();
                    self.publish_owned();
                    self.report_lost(lost);
                }
            }
        }
    }

    fn report_lost(&self, partitions: Vec<Partition>) {
        if !partitions.is_empty() {
            self.lost.do_send(PartitionsLost { partitions });
        }
    }
}

struct TickInput {
    node_id: String,
    partitions: u32,
    ttl_ms: u64,
    held: Vec<HeldLease>,
    draining: bool,
    confirmations: LeaseConfirmations,
}

/// What a tick ended with.
struct TickOutcome {
    held: Vec<HeldLease>,
    /// Partitions whose lease turned out to be someone else's.
    lost: Vec<Partition>,
    /// When the soonest-expiring other worker lapses unless it renews (epoch ms).
    next_peer_expiry_ms: Option<u64>,
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

async fn run_tick(redis: &Pool, input: TickInput) -> Result<TickOutcome, String> {
    let mut conn = redis.get().await.map_err(|e| e.to_string())?;
    let ttl = Duration::from_millis(input.ttl_ms);
    let renew_sent = Instant::now();
    let renewed = lease::renew_each(&mut conn, &input.held, &input.node_id, input.ttl_ms)
        .await
        .map_err(|e| e.to_string())?;
    let mut held = Vec::with_capacity(input.held.len());
    let mut lost = Vec::new();
    for (lease, still_held) in input.held.into_iter().zip(renewed) {
        if still_held {
            input
                .confirmations
                .confirm(lease.partition, lease.fence, renew_sent, ttl);
            held.push(lease);
        } else {
            input.confirmations.withdraw([lease.partition]);
            tracing::warn!(
                partition = lease.partition,
                fence = lease.fence,
                "lease lost"
            );
            lost.push(lease.partition);
        }
    }
    if input.draining {
        return Ok(TickOutcome {
            held,
            lost,
            next_peer_expiry_ms: None,
        });
    }

    let now = now_ms();
    let liveness = lease::heartbeat(&mut conn, &input.node_id, now, now + input.ttl_ms)
        .await
        .map_err(|e| e.to_string())?;
    let target = (input.partitions as usize).div_ceil(liveness.alive.max(1));

    held.sort_by_key(|l| std::cmp::Reverse(preference(&input.node_id, l.partition)));
    if held.len() > target {
        let extra = held.split_off(target);
        // Withdrawn before the release: the inbox asks Redis again from now on.
        input
            .confirmations
            .withdraw(extra.iter().map(|l| l.partition));
        lease::release_each(&mut conn, &extra, &input.node_id)
            .await
            .map_err(|e| e.to_string())?;
        for lease in &extra {
            metrics::incr(&metrics::get().partitions_released_total);
            tracing::info!(
                partition = lease.partition,
                "partition handed over for balance"
            );
        }
        lease::announce_released(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
    }

    if held.len() < target {
        let mut candidates: Vec<Partition> = (0..input.partitions)
            .filter(|p| !held.iter().any(|l| l.partition == *p))
            .collect();
        candidates.sort_by_key(|&p| std::cmp::Reverse(preference(&input.node_id, p)));
        // Ask for just the partitions still wanted, most preferred first, one round trip
        // per batch: most are free or not, so one or two batches settle it.
        let mut candidates = candidates.into_iter();
        while held.len() < target {
            let batch: Vec<Partition> = candidates.by_ref().take(target - held.len()).collect();
            if batch.is_empty() {
                break;
            }
            let acquire_sent = Instant::now();
            let acquired = lease::acquire_each(&mut conn, &batch, &input.node_id, input.ttl_ms)
                .await
                .map_err(|e| e.to_string())?;
            for lease in acquired {
                input
                    .confirmations
                    .confirm(lease.partition, lease.fence, acquire_sent, ttl);
                metrics::incr(&metrics::get().partition_takeovers_total);
                tracing::info!(
                    partition = lease.partition,
                    fence = lease.fence,
                    "partition acquired"
                );
                held.push(lease);
            }
        }
    }
    Ok(TickOutcome {
        held,
        lost,
        next_peer_expiry_ms: liveness.next_peer_expiry_ms,
    })
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

    fn handle(&mut self, ForgetLeases(scope): ForgetLeases, _ctx: &mut Self::Context) {
        self.held
            .retain(|&partition, _| !scope.covers_partition(partition));
        self.confirmations
            .withdraw((0..self.partitions).filter(|&p| scope.covers_partition(p)));
        self.publish_owned();
        self.retry_at = None;
    }
}

impl Handler<ReleaseAll> for LeaseKeeper {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: ReleaseAll, _ctx: &mut Self::Context) -> Self::Result {
        self.draining = true;
        let held: Vec<HeldLease> = self.held.drain().map(|(_, l)| l).collect();
        self.confirmations
            .withdraw(held.iter().map(|l| l.partition));
        self.publish_owned();
        let redis = self.redis.clone();
        let node_id = self.node_id.clone();
        Box::pin(
            async move {
                let Ok(mut conn) = redis.get().await else {
                    return;
                };
                // Leave first: a worker woken by the announcement must count one worker
                // fewer, or it would not aim to take these partitions.
                let _ = lease::leave(&mut conn, &node_id).await;
                let count = held.len();
                let _ = lease::release_each(&mut conn, &held, &node_id).await;
                for _ in 0..count {
                    metrics::incr(&metrics::get().partitions_released_total);
                }
                let _ = lease::announce_released(&mut conn).await;
                tracing::info!(partitions = count, "leases released");
            }
            .into_actor(self),
        )
    }
}

impl Handler<BeginDrain> for LeaseKeeper {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: BeginDrain, _ctx: &mut Self::Context) -> Self::Result {
        self.draining = true;
        self.publish_owned();
        let redis = self.redis.clone();
        let node_id = self.node_id.clone();
        Box::pin(
            async move {
                if let Ok(mut conn) = redis.get().await {
                    let _ = lease::leave(&mut conn, &node_id).await;
                }
            }
            .into_actor(self),
        )
    }
}

impl Handler<Rescan> for LeaseKeeper {
    type Result = ();

    fn handle(&mut self, _msg: Rescan, ctx: &mut Self::Context) {
        if !self.draining {
            self.tick(ctx);
        }
    }
}
