//! The pushers' consumer group on `iris:push:jobs` ([`PUSH_GROUP`]): reading new jobs,
//! claiming jobs another worker left idle, and acknowledging done ones. Jobs come back
//! decoded.

use redis::aio::ConnectionLike;
use redis::RedisResult;

use super::job::{PushJob, PUSH_GROUP};
use crate::consumer_group::{self, IdleEntries, StartAt};
use crate::keys;

/// A job as a pusher reads it.
#[derive(Debug, Clone)]
pub struct JobEntry {
    /// Its stream entry id.
    pub id: String,
    /// The job, or `None` if the entry could not be read.
    pub job: Option<PushJob>,
}

impl JobEntry {
    fn decode(entry: &redis::streams::StreamId) -> Self {
        Self {
            id: entry.id.clone(),
            job: PushJob::from_entry(entry),
        }
    }
}

/// Creates the group at the stream's end (and the stream, if missing), unless it exists.
pub async fn create_group<C: ConnectionLike + Send>(conn: &mut C) -> RedisResult<()> {
    consumer_group::create(conn, &keys::push_jobs(), PUSH_GROUP, StartAt::End).await
}

/// New jobs for `consumer`, at most `count`, waiting up to `block_ms` for one.
pub async fn read_new<C: ConnectionLike + Send>(
    conn: &mut C,
    consumer: &str,
    count: usize,
    block_ms: u64,
) -> RedisResult<Vec<JobEntry>> {
    let streams = [keys::push_jobs()];
    let read =
        consumer_group::read_new(conn, PUSH_GROUP, consumer, &streams, count, block_ms).await?;
    Ok(read
        .iter()
        .flat_map(|(_, entries)| entries.iter().map(JobEntry::decode))
        .collect())
}

/// Jobs idle in the group for at least `min_idle_ms` (their pusher died or stalled),
/// claimed for `consumer` page by page.
pub struct IdleJobs(IdleEntries);

impl IdleJobs {
    /// Jobs idle at least `min_idle_ms`, `page` at a time.
    pub fn new(consumer: &str, min_idle_ms: u64, page: usize) -> Self {
        Self(IdleEntries::new(
            keys::push_jobs(),
            PUSH_GROUP,
            consumer,
            min_idle_ms,
            page,
        ))
    }

    /// The next page; `None` once the stream was scanned to its end.
    pub async fn next_page<C: ConnectionLike + Send>(
        &mut self,
        conn: &mut C,
    ) -> RedisResult<Option<Vec<JobEntry>>> {
        let page = self.0.next_page(conn).await?;
        Ok(page.map(|entries| entries.iter().map(JobEntry::decode).collect()))
    }
}

/// Acknowledges job `id`.
pub async fn acknowledge<C: ConnectionLike + Send>(conn: &mut C, id: &str) -> RedisResult<()> {
    consumer_group::acknowledge(conn, PUSH_GROUP, [(keys::push_jobs(), id)]).await
}
