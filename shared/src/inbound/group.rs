//! The workers' consumer group on each inbound partition ([`keys::WORKER_GROUP`]): reading
//! new entries of the owned partitions, claiming pending ones on takeover or from a former
//! owner, and acknowledging handled ones. Entries come back decoded, once.

use redis::aio::ConnectionLike;
use redis::RedisResult;

use super::InboundEntry;
use crate::consumer_group::{self, IdleEntries, StartAt};
use crate::keys;
use crate::partition::Partition;

/// Creates the group on `partition`'s stream, from its beginning, unless it exists.
pub async fn create_group<C: ConnectionLike + Send>(
    conn: &mut C,
    partition: Partition,
) -> RedisResult<()> {
    let stream = keys::inbound(partition);
    consumer_group::create(conn, &stream, keys::WORKER_GROUP, StartAt::Beginning).await
}

/// New entries of `partitions` for `consumer`, at most `count` per partition, waiting up
/// to `block_ms` for one.
pub async fn read_new<C: ConnectionLike + Send>(
    conn: &mut C,
    consumer: &str,
    partitions: &[Partition],
    count: usize,
    block_ms: u64,
) -> RedisResult<Vec<(Partition, Vec<InboundEntry>)>> {
    let streams: Vec<String> = partitions.iter().map(|&p| keys::inbound(p)).collect();
    let read = consumer_group::read_new(
        conn,
        keys::WORKER_GROUP,
        consumer,
        &streams,
        count,
        block_ms,
    )
    .await?;
    Ok(read
        .into_iter()
        .filter_map(|(stream, entries)| {
            let at = streams.iter().position(|s| *s == stream)?;
            let partition = partitions[at];
            let decoded = entries
                .iter()
                .map(|entry| InboundEntry::decode(partition, entry))
                .collect();
            Some((partition, decoded))
        })
        .collect())
}

/// Every entry pending in `partition`'s group, claimed for `consumer` page by page (a new
/// owner takes over what its predecessor had read).
pub struct PendingEntries {
    partition: Partition,
    claim: IdleEntries,
}

impl PendingEntries {
    /// All of `partition`'s pending entries, `page` at a time.
    pub fn new(partition: Partition, consumer: &str, page: usize) -> Self {
        let stream = keys::inbound(partition);
        Self {
            partition,
            claim: IdleEntries::new(stream, keys::WORKER_GROUP, consumer, 0, page),
        }
    }

    /// The next page; `None` once every pending entry was claimed.
    pub async fn next_page<C: ConnectionLike + Send>(
        &mut self,
        conn: &mut C,
    ) -> RedisResult<Option<Vec<InboundEntry>>> {
        let page = self.claim.next_page(conn).await?;
        Ok(page.map(|entries| {
            entries
                .iter()
                .map(|entry| InboundEntry::decode(self.partition, entry))
                .collect()
        }))
    }
}

/// Consumers other than whoever asks may hold entries of `partition`: these have some.
pub async fn consumers_with_pending<C: ConnectionLike + Send>(
    conn: &mut C,
    partition: Partition,
) -> RedisResult<Vec<String>> {
    consumer_group::consumers_with_pending(conn, &keys::inbound(partition), keys::WORKER_GROUP)
        .await
}

/// Claims for `consumer` up to `count` of the oldest entries of `partition` pending on
/// `from`.
pub async fn claim_from<C: ConnectionLike + Send>(
    conn: &mut C,
    partition: Partition,
    from: &str,
    consumer: &str,
    count: usize,
) -> RedisResult<Vec<InboundEntry>> {
    let stream = keys::inbound(partition);
    let claimed =
        consumer_group::claim_from(conn, &stream, keys::WORKER_GROUP, from, consumer, count)
            .await?;
    Ok(claimed
        .iter()
        .map(|entry| InboundEntry::decode(partition, entry))
        .collect())
}

/// Acknowledges handled `entries` (of any partitions) in one round trip.
pub async fn acknowledge<C: ConnectionLike + Send>(
    conn: &mut C,
    entries: &[InboundEntry],
) -> RedisResult<()> {
    let acks = entries
        .iter()
        .map(|entry| (keys::inbound(entry.partition), entry.entry_id.as_str()));
    consumer_group::acknowledge(conn, keys::WORKER_GROUP, acks).await
}
