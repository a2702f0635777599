//! The cluster epoch: random values in Redis that tell a node whether the Redis it talks
//! to still holds the data it talked to before.
//!
//! The first node creates an epoch key (`SET NX`); every node remembers the value it saw
//! and checks it again after reconnecting and periodically. A missing key (FLUSHALL, a new
//! empty instance, a replica promoted without the data) or a different value means the
//! data was lost: the check rewrites the key in the same command, so every node sees one
//! new epoch, and the caller resets what it derived from the old data.
//!
//! On one Redis (plain or Sentinel) that is one key, `iris:epoch`, and a loss concerns
//! everything. On a Redis Cluster every master holds an epoch key of its own (a hash tag
//! chosen to fall in its slots), so a shard that loses its data is found alone, and the
//! loss concerns exactly the slots that shard serves ([`LostScope`]): the accounts and
//! partitions whose keys are there. Keys a node knew are checked wherever a reshard moved
//! them.

use std::collections::HashMap;

use redis::aio::ConnectionLike;

use crate::keys::{self, AccountKeys};
use crate::partition::Partition;
use crate::redis_conn::slots::{self, slot_of, SlotRange};
use crate::redis_conn::Link;

/// How often nodes re-check the epoch while Redis is reachable.
pub const CHECK_INTERVAL_MS: u64 = 2_000;
/// Most hash tags tried when looking for one that falls in a master's slots.
const TAG_SEARCH_LIMIT: u32 = 1 << 20;

/// What lost its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LostScope {
    /// The whole store (one Redis).
    Everything,
    /// The slots of one or more Cluster shards, as inclusive ranges.
    Slots(Vec<(u16, u16)>),
}

impl LostScope {
    /// Whether the keys of slot `slot` were lost.
    pub fn covers_slot(&self, slot: u16) -> bool {
        match self {
            Self::Everything => true,
            Self::Slots(ranges) => in_ranges(ranges, slot),
        }
    }

    /// Whether `account`'s state was lost.
    pub fn covers_account(&self, account: &str) -> bool {
        matches!(self, Self::Everything)
            || self.covers_slot(slot_of(&AccountKeys::new(account).outbox()))
    }

    /// Whether `partition`'s stream, lease and fence were lost.
    pub fn covers_partition(&self, partition: Partition) -> bool {
        matches!(self, Self::Everything) || self.covers_slot(slot_of(&keys::lease(partition)))
    }
}

/// The epochs a node has seen, by key.
#[derive(Debug, Default, Clone)]
pub struct EpochKeeper {
    known: HashMap<String, String>,
}

/// A fresh epoch value: creation time and randomness, so two are never equal.
fn fresh_epoch(now_ms: u64) -> String {
    format!("{now_ms}-{:016x}", rand::random::<u64>())
}

/// Reads the epoch at `key`, creating it if it is missing; returns the value now there.
async fn read_or_create<C: ConnectionLike + Send>(
    conn: &mut C,
    key: &str,
    now_ms: u64,
) -> redis::RedisResult<String> {
    let candidate = fresh_epoch(now_ms);
    // One command sets the key only if absent and returns what was there before.
    let previous: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(&candidate)
        .arg("NX")
        .arg("GET")
        .query_async(conn)
        .await?;
    Ok(previous.unwrap_or(candidate))
}

/// Whether `slot` is in one of the inclusive `ranges`.
fn in_ranges(ranges: &[(u16, u16)], slot: u16) -> bool {
    ranges
        .iter()
        .any(|&(start, end)| (start..=end).contains(&slot))
}

/// An epoch key in `ranges` (the slots of one master): the first `{e:<n>}` tag that
/// hashes there.
fn key_within(ranges: &[(u16, u16)]) -> Option<String> {
    (0..TAG_SEARCH_LIMIT)
        .map(keys::shard_epoch)
        .find(|key| in_ranges(ranges, slot_of(key)))
}

impl EpochKeeper {
    /// Checks every epoch (creating missing ones); `Some` names what lost its data since
    /// the last check. The first check adopts what it finds.
    pub async fn check(
        &mut self,
        conn: &mut Link,
        now_ms: u64,
    ) -> redis::RedisResult<Option<LostScope>> {
        if matches!(conn, Link::Server(_)) {
            let key = keys::cluster_epoch();
            let now = read_or_create(conn, &key, now_ms).await?;
            let lost = self.note(&key, now).then_some(LostScope::Everything);
            return Ok(lost);
        }
        let map = slots::slot_map(conn).await?;
        let mut by_master: HashMap<&str, Vec<(u16, u16)>> = HashMap::new();
        for SlotRange { start, end, master } in &map {
            by_master.entry(master).or_default().push((*start, *end));
        }
        let mut keys: Vec<String> = by_master.values().filter_map(|r| key_within(r)).collect();
        for key in self.known.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
        let mut lost_ranges = Vec::new();
        for key in keys {
            let now = read_or_create(conn, &key, now_ms).await?;
            if self.note(&key, now) {
                let slot = slot_of(&key);
                let shard = map
                    .iter()
                    .find(|range| (range.start..=range.end).contains(&slot))
                    .map(|range| range.master.as_str());
                lost_ranges.extend(
                    shard
                        .and_then(|master| by_master.get(master))
                        .into_iter()
                        .flatten()
                        .copied(),
                );
            }
        }
        Ok((!lost_ranges.is_empty()).then_some(LostScope::Slots(lost_ranges)))
    }

    /// Remembers `now` for `key`; whether it differs from what was known (a loss).
    fn note(&mut self, key: &str, now: String) -> bool {
        match self.known.insert(key.to_owned(), now.clone()) {
            Some(was) if was != now => {
                tracing::error!(key, %was, %now, "an epoch changed: Redis lost data");
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_shard_covers_exactly_the_accounts_and_partitions_in_its_slots() {
        let alice = slot_of(&AccountKeys::new("alice").outbox());
        let scope = LostScope::Slots(vec![(alice, alice)]);
        assert!(scope.covers_account("alice"));
        assert!(
            !scope.covers_account("bob") || slot_of(&AccountKeys::new("bob").outbox()) == alice
        );
        assert!(LostScope::Everything.covers_partition(3));
        let partition_slot = slot_of(&keys::lease(3));
        assert!(LostScope::Slots(vec![(partition_slot, partition_slot)]).covers_partition(11));
    }

    #[test]
    fn every_master_gets_an_epoch_key_in_its_own_slots() {
        for ranges in [
            vec![(0, 5460)],
            vec![(5461, 10922)],
            vec![(16000, 16383), (3, 3)],
        ] {
            let key = key_within(&ranges).expect("a tag within the ranges");
            assert!(
                LostScope::Slots(ranges.clone()).covers_slot(slot_of(&key)),
                "{key}"
            );
        }
    }
}
