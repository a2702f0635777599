//! Consumer groups over Redis streams: the one place that creates a group, reads new
//! entries for a consumer, claims entries left pending on others, and acknowledges them.
//! The records that are read this way (inbound partitions in [`crate::inbound`], push jobs
//! in [`crate::push::jobs`]) name their streams and groups and call these.

use redis::aio::ConnectionLike;
use redis::streams::{
    StreamAutoClaimReply, StreamClaimReply, StreamId, StreamPendingCountReply, StreamPendingReply,
    StreamReadReply,
};
use redis::RedisResult;

/// A stream entry id (`<ms>-<n>`) as a pair that sorts the way the stream orders entries
/// (text order does not: `10-2` sorts before `9-5`); `None` if it is not an entry id.
pub fn entry_order(id: &str) -> Option<(u64, u64)> {
    let (ms, n) = id.split_once('-')?;
    Some((ms.parse().ok()?, n.parse().ok()?))
}

/// Where a group created now starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// Every entry already in the stream is delivered too.
    Beginning,
    /// Only entries added from now on.
    End,
}

/// Creates `group` on `stream` (and the stream, if missing) unless it exists.
pub async fn create<C: ConnectionLike + Send>(
    conn: &mut C,
    stream: &str,
    group: &str,
    start: StartAt,
) -> RedisResult<()> {
    let start = match start {
        StartAt::Beginning => "0",
        StartAt::End => "$",
    };
    let created: RedisResult<()> = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(stream)
        .arg(group)
        .arg(start)
        .arg("MKSTREAM")
        .query_async(conn)
        .await;
    match created {
        Err(err) if err.code() != Some("BUSYGROUP") => Err(err),
        _ => Ok(()),
    }
}

/// Entries of `streams` never delivered to the group, at most `count` per stream, waiting
/// up to `block_ms` for one (the connection's response timeout must exceed it).
pub async fn read_new<C: ConnectionLike + Send>(
    conn: &mut C,
    group: &str,
    consumer: &str,
    streams: &[String],
    count: usize,
    block_ms: u64,
) -> RedisResult<Vec<(String, Vec<StreamId>)>> {
    let mut read = redis::cmd("XREADGROUP");
    read.arg("GROUP")
        .arg(group)
        .arg(consumer)
        .arg("COUNT")
        .arg(count)
        .arg("BLOCK")
        .arg(block_ms)
        .arg("STREAMS")
        .arg(streams);
    for _ in streams {
        read.arg(">");
    }
    let reply: Option<StreamReadReply> = read.query_async(conn).await?;
    Ok(reply
        .into_iter()
        .flat_map(|reply| reply.keys)
        .map(|stream| (stream.key, stream.ids))
        .collect())
}

/// Acknowledges `(stream, entry id)` pairs of `group` in one round trip.
pub async fn acknowledge<'a, C: ConnectionLike + Send>(
    conn: &mut C,
    group: &str,
    entries: impl IntoIterator<Item = (String, &'a str)>,
) -> RedisResult<()> {
    let mut pipe = redis::pipe();
    for (stream, id) in entries {
        pipe.cmd("XACK").arg(stream).arg(group).arg(id).ignore();
    }
    pipe.query_async(conn).await
}

/// The entries of a stream pending in a group for longer than a threshold, claimed for one
/// consumer a page at a time (`XAUTOCLAIM` from the stream's start to its end).
pub struct IdleEntries {
    stream: String,
    group: &'static str,
    consumer: String,
    min_idle_ms: u64,
    page: usize,
    /// Where the next page starts; `None` once the whole stream was scanned.
    cursor: Option<String>,
}

impl IdleEntries {
    /// Entries idle at least `min_idle_ms` (0: every pending entry), `page` at a time.
    pub fn new(
        stream: String,
        group: &'static str,
        consumer: &str,
        min_idle_ms: u64,
        page: usize,
    ) -> Self {
        Self {
            stream,
            group,
            consumer: consumer.to_owned(),
            min_idle_ms,
            page,
            cursor: Some("0-0".to_owned()),
        }
    }

    /// Claims the next page; `None` once the stream was scanned to its end.
    pub async fn next_page<C: ConnectionLike + Send>(
        &mut self,
        conn: &mut C,
    ) -> RedisResult<Option<Vec<StreamId>>> {
        let Some(cursor) = self.cursor.take() else {
            return Ok(None);
        };
        let reply: StreamAutoClaimReply = redis::cmd("XAUTOCLAIM")
            .arg(&self.stream)
            .arg(self.group)
            .arg(&self.consumer)
            .arg(self.min_idle_ms)
            .arg(cursor)
            .arg("COUNT")
            .arg(self.page)
            .query_async(conn)
            .await?;
        self.cursor = Some(reply.next_stream_id).filter(|next| next != "0-0");
        Ok(Some(reply.claimed))
    }
}

/// The consumers of `group` that have entries pending.
pub async fn consumers_with_pending<C: ConnectionLike + Send>(
    conn: &mut C,
    stream: &str,
    group: &str,
) -> RedisResult<Vec<String>> {
    let summary: StreamPendingReply = redis::cmd("XPENDING")
        .arg(stream)
        .arg(group)
        .query_async(conn)
        .await?;
    Ok(match summary {
        StreamPendingReply::Data(data) => data.consumers.into_iter().map(|c| c.name).collect(),
        _ => Vec::new(),
    })
}

/// Claims for `consumer` up to `count` of the oldest entries pending on `from`.
pub async fn claim_from<C: ConnectionLike + Send>(
    conn: &mut C,
    stream: &str,
    group: &str,
    from: &str,
    consumer: &str,
    count: usize,
) -> RedisResult<Vec<StreamId>> {
    let pending: StreamPendingCountReply = redis::cmd("XPENDING")
        .arg(stream)
        .arg(group)
        .arg("-")
        .arg("+")
        .arg(count)
        .arg(from)
        .query_async(conn)
        .await?;
    if pending.ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut claim = redis::cmd("XCLAIM");
    claim.arg(stream).arg(group).arg(consumer).arg(0);
    for entry in &pending.ids {
        claim.arg(&entry.id);
    }
    let reply: StreamClaimReply = claim.query_async(conn).await?;
    Ok(reply.ids)
}
