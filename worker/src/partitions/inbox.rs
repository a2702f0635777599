//! The worker's blocking reads: inbound entries of every partition it owns, read with
//! the consumer group, and handed to the chat directory in stream order. There is one
//! reader per partition slot group: on a Redis Cluster a command may name keys of one slot
//! only, and on one Redis a blocking `XREADGROUP` costs the server in proportion to the
//! streams it names, each time any of them wakes it (over all 64 partitions, about 330 µs
//! per read, during which every other command waits).
//!
//! When the worker gains a partition it first claims every entry still pending in the
//! group (left by a worker that died or gave the partition up) and dispatches those
//! before anything new, so takeover loses nothing and keeps each chat's order.
//!
//! A change of owned partitions cuts the current blocking read short (`CLIENT UNBLOCK`
//! from a pooled connection), so a gained partition is taken over at once and a drain
//! (which hides every partition) stops reading at once.
//!
//! Entries are handed on only while this worker still holds the partition's lease (known
//! from a renewal sent less than a TTL ago, `lease_confirmations`, else asked of Redis: a
//! worker that was paused may read once more before its lease keeper notices the loss);
//! entries left that way on a former owner are claimed by the owner's sweep
//! (`strays`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::Addr;
use tokio::sync::watch;

use iris_shared::backoff::Backoff;
use iris_shared::inbound::{self, InboundEntry, PendingEntries};
use iris_shared::keys;
use iris_shared::lease::{self, HeldLease};
use iris_shared::partition::Partition;
use iris_shared::redis_conn;
use iris_shared::redis_conn::{Link, Pool, RedisEndpoint};

use crate::chat::directory::{ChatDirectory, Dispatch};
use crate::partitions::lease_confirmations::LeaseConfirmations;
use crate::partitions::strays::claim_strays;

/// Longest a read blocks (a change of owned partitions cuts it short).
const BLOCK_MS: u64 = 1_000;
/// Attempts to cut a read short when the reader was not blocked yet (it may be about to).
const WAKE_ATTEMPTS: u32 = 5;
/// Pause between those attempts.
const WAKE_RETRY: Duration = Duration::from_millis(20);
/// Most entries taken per read or claim.
const BATCH: usize = 100;
/// How often owned partitions are swept for entries left on former owners.
const STRAY_SWEEP_INTERVAL: Duration = Duration::from_secs(2);

/// Partitions this worker owns, with their fencing tokens.
pub type Owned = HashMap<Partition, u64>;

/// Reads owned partitions until the process ends.
pub async fn run(
    endpoint: RedisEndpoint,
    node_id: String,
    owned: watch::Receiver<Owned>,
    confirmations: LeaseConfirmations,
    directory: Addr<ChatDirectory>,
    redis: Pool,
) {
    let readers = Readers {
        endpoint,
        node_id,
        confirmations,
        directory,
        redis,
    };
    let readers: Vec<_> = (0..keys::PARTITION_SLOT_GROUPS)
        .map(|group| {
            let (tx, rx) = watch::channel(Owned::new());
            actix::spawn(forward_group(owned.clone(), group, tx));
            // Partition `group` is in slot group `group`: its stream names the group's slot.
            let routing_key = keys::inbound(group);
            actix::spawn(read(readers.clone(), rx, routing_key))
        })
        .collect();
    for reader in readers {
        let _ = reader.await;
    }
}

/// Keeps `tx` at the owned partitions of slot group `group`.
async fn forward_group(mut owned: watch::Receiver<Owned>, group: u32, tx: watch::Sender<Owned>) {
    loop {
        let in_group: Owned = owned
            .borrow_and_update()
            .iter()
            .filter(|(&partition, _)| keys::partition_slot_group(partition) == group)
            .map(|(&partition, &fence)| (partition, fence))
            .collect();
        tx.send_if_modified(|current| {
            let changed = *current != in_group;
            *current = in_group;
            changed
        });
        if owned.changed().await.is_err() {
            return;
        }
    }
}

/// What every reader shares.
#[derive(Clone)]
struct Readers {
    endpoint: RedisEndpoint,
    node_id: String,
    confirmations: LeaseConfirmations,
    directory: Addr<ChatDirectory>,
    redis: Pool,
}

/// Reads the partitions `owned` names (all of one slot, on a Cluster, whose server
/// `routing_key` finds) until the process ends.
async fn read(readers: Readers, mut owned: watch::Receiver<Owned>, routing_key: String) {
    let Readers {
        endpoint,
        node_id,
        confirmations,
        directory,
        redis,
    } = readers;
    let mut prepared: Owned = HashMap::new();
    let mut backoff = Backoff::default();
    loop {
        let connected = async {
            let block = Duration::from_millis(BLOCK_MS);
            let mut conn = redis_conn::blocking_connection(&endpoint, block).await?;
            let client_id = conn.client_id(&routing_key).await?;
            Ok::<_, redis_conn::RedisConnError>((conn, client_id))
        };
        let (mut conn, client_id) = match connected.await {
            Ok(connected) => connected,
            Err(err) => {
                tracing::warn!(%err, "inbox: cannot connect to Redis");
                backoff.wait().await;
                continue;
            }
        };
        let waker = actix::spawn(wake_on_change(
            redis.clone(),
            owned.clone(),
            client_id,
            routing_key.clone(),
        ));
        let reading = Reading {
            endpoint: &endpoint,
            addr: &conn.addr,
            node_id: &node_id,
            confirmations: &confirmations,
            directory: &directory,
        };
        let result = follow(
            &mut conn.conn,
            reading,
            &mut owned,
            &mut prepared,
            &mut backoff,
        )
        .await;
        waker.abort();
        endpoint.note_refusal(&conn.addr, &result);
        if let Err(err) = result {
            tracing::warn!(%err, "inbox: Redis error, reconnecting");
            // Pending entries are claimed again on reconnect (groups may even be gone).
            prepared.clear();
            backoff.wait().await;
        }
    }
}

/// Who reads, and where entries go.
#[derive(Clone, Copy)]
struct Reading<'a> {
    endpoint: &'a RedisEndpoint,
    /// The server the connection goes to.
    addr: &'a str,
    node_id: &'a str,
    confirmations: &'a LeaseConfirmations,
    directory: &'a Addr<ChatDirectory>,
}

/// Cuts the reader's blocking read short whenever the owned partitions change.
async fn wake_on_change(
    redis: Pool,
    mut owned: watch::Receiver<Owned>,
    client_id: i64,
    routing_key: String,
) {
    while owned.changed().await.is_ok() {
        for _ in 0..WAKE_ATTEMPTS {
            let Ok(mut conn) = redis.get().await else {
                break;
            };
            let unblocked = redis_conn::unblock_client(&mut conn, client_id, &routing_key).await;
            if !matches!(unblocked, Ok(false)) {
                break;
            }
            tokio::time::sleep(WAKE_RETRY).await;
        }
    }
}

async fn follow(
    conn: &mut Link,
    Reading {
        endpoint,
        addr,
        node_id,
        confirmations,
        directory,
    }: Reading<'_>,
    owned: &mut watch::Receiver<Owned>,
    prepared: &mut Owned,
    backoff: &mut Backoff,
) -> redis::RedisResult<()> {
    let mut last_sweep = Instant::now();
    loop {
        let current = owned.borrow_and_update().clone();
        if current.is_empty() {
            prepared.clear();
            if owned.changed().await.is_err() {
                return Ok(());
            }
            continue;
        }
        prepared.retain(|partition, fence| current.get(partition) == Some(fence));
        for (&partition, &fence) in &current {
            if let std::collections::hash_map::Entry::Vacant(slot) = prepared.entry(partition) {
                take_over(conn, node_id, partition, fence, directory).await?;
                slot.insert(fence);
            }
        }
        if last_sweep.elapsed() >= STRAY_SWEEP_INTERVAL {
            last_sweep = Instant::now();
            for (&partition, &fence) in &current {
                for entry in claim_strays(conn, node_id, partition).await? {
                    dispatch(directory, fence, entry);
                }
            }
        }
        let mut partitions: Vec<Partition> = current.keys().copied().collect();
        partitions.sort_unstable();
        // The connection's response timeout bounds the read; a failover cuts it short.
        let read = inbound::read_new(conn, node_id, &partitions, BATCH, BLOCK_MS);
        let read = tokio::select! {
            read = read => read?,
            () = endpoint.until_not_master(addr) => return Err(redis_conn::not_master(addr)),
        };
        redis_conn::ensure_master(endpoint, addr).await?;
        backoff.reset();
        for (partition, entries) in read {
            let fence = current[&partition];
            // A lease renewed less than a TTL ago is surely still held; else ask Redis.
            let held = confirmations.holds(partition, fence, Instant::now())
                || lease::holds(conn, HeldLease { partition, fence }, node_id).await?;
            if !held {
                tracing::warn!(
                    partition,
                    fence,
                    entries = entries.len(),
                    "read after the lease was lost; left to the new owner"
                );
                continue;
            }
            for entry in entries {
                dispatch(directory, fence, entry);
            }
        }
    }
}

/// Makes sure the group exists, then claims and dispatches every pending entry.
async fn take_over(
    conn: &mut Link,
    node_id: &str,
    partition: Partition,
    fence: u64,
    directory: &Addr<ChatDirectory>,
) -> redis::RedisResult<()> {
    inbound::create_group(conn, partition).await?;
    let mut pending = PendingEntries::new(partition, node_id, BATCH);
    let mut claimed = 0usize;
    while let Some(page) = pending.next_page(conn).await? {
        claimed += page.len();
        for entry in page {
            dispatch(directory, fence, entry);
        }
    }
    tracing::info!(partition, fence, claimed, "partition taken over");
    Ok(())
}

fn dispatch(directory: &Addr<ChatDirectory>, fence: u64, entry: InboundEntry) {
    let stats = crate::metrics::get();
    crate::metrics::incr(&stats.inbound_entries_total);
    if let Some(request) = &entry.request {
        let waited = iris_shared::clock::now_ms() as i64 - request.received_ms as i64;
        stats.inbound_lag_seconds.observe_ms(waited);
    }
    directory.do_send(Dispatch { entry, fence });
}
