//! Entries of an owned partition left pending on another consumer after this worker took
//! the partition over: a worker that lost its lease (paused, cut off) may read once more
//! before it notices. It never handles them (the inbox checks its lease first), so the
//! owner claims them here, every few seconds, and handles them like any pending entry.

use redis::aio::MultiplexedConnection;
use redis::streams::{StreamClaimReply, StreamId, StreamPendingCountReply, StreamPendingReply};

use iris_shared::keys;
use iris_shared::partition::Partition;

/// Most entries claimed from one other consumer per sweep.
const BATCH: usize = 100;

/// Claims every entry of `partition` pending on a consumer other than `node_id`, oldest
/// first.
pub async fn claim_strays(
    conn: &mut MultiplexedConnection,
    node_id: &str,
    partition: Partition,
) -> redis::RedisResult<Vec<StreamId>> {
    let stream = keys::inbound(partition);
    let summary: StreamPendingReply = redis::cmd("XPENDING")
        .arg(&stream)
        .arg(keys::WORKER_GROUP)
        .query_async(conn)
        .await?;
    let StreamPendingReply::Data(summary) = summary else {
        return Ok(Vec::new());
    };
    let mut claimed = Vec::new();
    for consumer in summary.consumers.iter().filter(|c| c.name != node_id) {
        let pending: StreamPendingCountReply = redis::cmd("XPENDING")
            .arg(&stream)
            .arg(keys::WORKER_GROUP)
            .arg("-")
            .arg("+")
            .arg(BATCH)
            .arg(&consumer.name)
            .query_async(conn)
            .await?;
        if pending.ids.is_empty() {
            continue;
        }
        let mut claim = redis::cmd("XCLAIM");
        claim
            .arg(&stream)
            .arg(keys::WORKER_GROUP)
            .arg(node_id)
            .arg(0);
        for entry in &pending.ids {
            claim.arg(&entry.id);
        }
        let reply: StreamClaimReply = claim.query_async(conn).await?;
        tracing::warn!(
            partition,
            from = %consumer.name,
            claimed = reply.ids.len(),
            "claimed entries left pending on a former owner"
        );
        claimed.extend(reply.ids);
    }
    claimed.sort_by_key(|entry| entry_order(&entry.id));
    Ok(claimed)
}

/// A stream entry id (`<ms>-<n>`) as a sortable pair.
fn entry_order(id: &str) -> (u64, u64) {
    let (ms, n) = id.split_once('-').unwrap_or((id, "0"));
    (ms.parse().unwrap_or(0), n.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::entry_order;

    #[test]
    fn entry_ids_sort_by_time_then_sequence() {
        let mut ids = vec!["10-2", "9-5", "10-10"];
        ids.sort_by_key(|id| entry_order(id));
        assert_eq!(ids, ["9-5", "10-2", "10-10"]);
    }
}
