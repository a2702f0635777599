//! Entries of an owned partition left pending on another consumer after this worker took
//! the partition over: a worker that lost its lease (paused, cut off) may read once more
//! before it notices. It never handles them (the inbox checks its lease first), so the
//! owner claims them here, every few seconds, and handles them like any pending entry.

use iris_shared::consumer_group::entry_order;
use iris_shared::inbound::{self, InboundEntry};
use iris_shared::partition::Partition;
use iris_shared::redis_conn::Link;

/// Most entries claimed from one other consumer per sweep.
const BATCH: usize = 100;

/// Claims every entry of `partition` pending on a consumer other than `node_id`, oldest
/// first.
pub async fn claim_strays(
    conn: &mut Link,
    node_id: &str,
    partition: Partition,
) -> redis::RedisResult<Vec<InboundEntry>> {
    let mut claimed = Vec::new();
    for consumer in inbound::consumers_with_pending(conn, partition).await? {
        if consumer == node_id {
            continue;
        }
        let entries = inbound::claim_from(conn, partition, &consumer, node_id, BATCH).await?;
        if entries.is_empty() {
            continue;
        }
        tracing::warn!(
            partition,
            from = %consumer,
            claimed = entries.len(),
            "claimed entries left pending on a former owner"
        );
        claimed.extend(entries);
    }
    claimed.sort_by_key(|entry| entry_order(&entry.entry_id).unwrap_or_default());
    Ok(claimed)
}

#[cfg(test)]
mod tests {
    use super::entry_order;

    #[test]
    fn entry_ids_sort_by_time_then_sequence() {
        let mut ids = vec!["10-2", "9-5", "10-10"];
        ids.sort_by_key(|id| entry_order(id).unwrap_or_default());
        assert_eq!(ids, ["9-5", "10-2", "10-10"]);
    }
}
