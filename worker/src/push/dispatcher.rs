//! The push dispatcher: reads `iris:push:jobs` with consumer group `pushers` (consumer =
//! this node) and hands each job to the fanout, many at once.
//!
//! - The group is created at the stream's end (`$`, with `MKSTREAM`): jobs written before
//!   any dispatcher existed are old news and are not pushed.
//! - At start, and every [`CLAIM_EVERY`] after, it claims (`XAUTOCLAIM`) the group's entries
//!   idle longer than [`CLAIM_IDLE`]: jobs of dispatchers that died, or its own that failed
//!   on a Redis error. A job handled twice pushes each device once (sent markers).
//! - A job is acknowledged when every push it causes was sent or given up; one that failed
//!   on Redis stays pending and is claimed again later. Jobs that cannot be read, or are
//!   older than [`STALE_AFTER`], are acknowledged without a push.
//! - At most [`MAX_IN_FLIGHT`] jobs are handled at once; the read waits for room.
//!
//! The read runs on a blocking connection of its own and reconnects after errors; nothing
//! here is on the chat path (workers only `XADD` the job).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::push::job_group::{self, IdleJobs, JobEntry};
use iris_shared::redis_conn;
use iris_shared::redis_conn::RedisEndpoint;
use iris_shared::redis_conn::{Link, Pool};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::channels::Channels;
use super::fanout::Fanout;
use super::settings::PushSettings;

/// Longest one read blocks; also bounds how late a due claim runs.
const BLOCK_MS: u64 = 1_000;
/// Most entries taken per read or claim.
const BATCH: usize = 100;
/// An entry pending this long without being acknowledged belongs to a dead (or failed)
/// handler and is claimed.
pub const CLAIM_IDLE: Duration = Duration::from_secs(30);
/// How often idle entries are looked for.
pub const CLAIM_EVERY: Duration = Duration::from_secs(30);
/// Most jobs handled at once.
pub const MAX_IN_FLIGHT: usize = 256;
/// A job older than this (by its entry id) is acknowledged without pushing: the device has
/// almost certainly been online since, or the news is stale.
pub const STALE_AFTER: Duration = Duration::from_secs(15 * 60);

/// Timing of the dispatcher (the constants above; tests shorten them).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// See [`CLAIM_IDLE`].
    pub claim_idle: Duration,
    /// See [`CLAIM_EVERY`].
    pub claim_every: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            claim_idle: CLAIM_IDLE,
            claim_every: CLAIM_EVERY,
        }
    }
}

/// Reads push jobs and sends their notifications.
pub struct Dispatcher {
    endpoint: RedisEndpoint,
    node_id: String,
    redis: Pool,
    fanout: Arc<Fanout>,
    timing: Timing,
    /// Entry ids being handled now, so a claim does not start one twice.
    in_flight: Arc<Mutex<HashSet<String>>>,
    room: Arc<Semaphore>,
}

impl Dispatcher {
    /// A dispatcher consuming as `node_id`, sending through the services in `settings`.
    /// It has a connection pool of its own, so a burst of jobs never makes the chat path
    /// wait for a connection. Fails if the FCM key cannot sign.
    pub fn new(
        endpoint: RedisEndpoint,
        node_id: String,
        settings: &PushSettings,
    ) -> anyhow::Result<Self> {
        let redis = redis_conn::pool(&endpoint)?;
        let channels = Channels::new(settings)?;
        let fanout = Fanout::new(
            redis.clone(),
            channels,
            settings.min_interval,
            node_id.clone(),
        );
        Ok(Self {
            endpoint,
            node_id,
            fanout: Arc::new(fanout),
            redis,
            timing: Timing::default(),
            in_flight: Arc::default(),
            room: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        })
    }

    /// The same dispatcher with other timing.
    #[cfg(test)]
    pub fn with_timing(self, timing: Timing) -> Self {
        Self { timing, ..self }
    }

    /// Makes sure the consumer group exists. Called before the worker starts writing, so
    /// no job this worker writes can come before the group and go unread.
    pub async fn prepare(&self) -> anyhow::Result<()> {
        let mut conn = self.redis.get().await?;
        job_group::create_group(&mut conn).await?;
        Ok(())
    }

    /// Reads and handles jobs until the process ends.
    pub async fn run(self) {
        tracing::info!(node = %self.node_id, "push dispatcher running");
        let mut backoff = Backoff::default();
        loop {
            let block = Duration::from_millis(BLOCK_MS);
            let mut conn = match redis_conn::blocking_connection(&self.endpoint, block).await {
                Ok(conn) => conn,
                Err(err) => {
                    tracing::warn!(%err, "push: cannot connect to Redis");
                    backoff.wait().await;
                    continue;
                }
            };
            let result = self.follow(&mut conn, &mut backoff).await;
            self.endpoint.note_refusal(&conn.addr, &result);
            if let Err(err) = result {
                tracing::warn!(%err, "push: Redis error, reconnecting");
                backoff.wait().await;
            }
        }
    }

    async fn follow(
        &self,
        connection: &mut redis_conn::BlockingConnection,
        backoff: &mut Backoff,
    ) -> redis::RedisResult<()> {
        let conn = &mut connection.conn;
        let addr = connection.addr.as_str();
        // Again on every connection: the stream (and its group) may have been deleted.
        job_group::create_group(conn).await?;
        backoff.reset();
        let mut next_claim = Instant::now();
        loop {
            if Instant::now() >= next_claim {
                self.claim_idle(conn).await?;
                next_claim = Instant::now() + self.timing.claim_every;
            }
            // The connection's response timeout bounds the read; a failover cuts it short.
            let read = job_group::read_new(conn, &self.node_id, BATCH, BLOCK_MS);
            let jobs = tokio::select! {
                jobs = read => jobs?,
                () = self.endpoint.until_not_master(addr) => {
                    return Err(redis_conn::not_master(addr));
                }
            };
            redis_conn::ensure_master(&self.endpoint, addr).await?;
            for entry in jobs {
                self.start(entry).await;
            }
        }
    }

    /// Claims and starts every entry idle longer than the claim threshold.
    async fn claim_idle(&self, conn: &mut Link) -> redis::RedisResult<()> {
        let min_idle_ms = self.timing.claim_idle.as_millis() as u64;
        let mut idle = IdleJobs::new(&self.node_id, min_idle_ms, BATCH);
        let mut claimed = 0usize;
        while let Some(page) = idle.next_page(conn).await? {
            claimed += page.len();
            for entry in page {
                self.start(entry).await;
            }
        }
        if claimed > 0 {
            tracing::info!(claimed, "push: idle jobs claimed");
        }
        Ok(())
    }

    /// Starts handling `entry` in a task of its own (waiting for room first), unless it is
    /// being handled already.
    async fn start(&self, entry: JobEntry) {
        if !self
            .in_flight
            .lock()
            .expect("in-flight lock")
            .insert(entry.id.clone())
        {
            return;
        }
        let permit = self
            .room
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let fanout = self.fanout.clone();
        let redis = self.redis.clone();
        let in_flight = self.in_flight.clone();
        tokio::spawn(async move {
            if handle(&fanout, &entry).await {
                acknowledge(&redis, &entry.id).await;
            }
            in_flight.lock().expect("in-flight lock").remove(&entry.id);
            drop(permit);
        });
    }
}

/// Milliseconds part of a stream entry id (`<ms>-<n>`): when the job was written.
fn written_ms(entry_id: &str) -> Option<u64> {
    entry_id.split('-').next()?.parse().ok()
}

/// Handles one entry; `true` if it is done with and may be acknowledged.
async fn handle(fanout: &Fanout, entry: &JobEntry) -> bool {
    let Some(job) = entry.job.clone() else {
        tracing::warn!(entry = %entry.id, "push: unreadable job dropped");
        return true;
    };
    let age_ms = written_ms(&entry.id).map_or(0, |written| now_ms().saturating_sub(written));
    if age_ms > STALE_AFTER.as_millis() as u64 {
        tracing::info!(entry = %entry.id, account = %job.account, seq = job.seq, age_ms,
            "push: stale job dropped");
        return true;
    }
    let (account, seq, kind) = (job.account.clone(), job.seq, job.kind);
    match fanout.handle(job).await {
        Ok(report) => {
            tracing::info!(
                entry = %entry.id, %account, seq, kind = kind.as_str(),
                pushed = report.pushed, merged = report.merged, online = report.online,
                already_pushed = report.already_pushed, "push job done"
            );
            true
        }
        Err(err) => {
            tracing::warn!(entry = %entry.id, %account, seq, %err,
                "push job failed; it stays pending and is claimed again");
            false
        }
    }
}

/// Acknowledges entry `id`; on failure it stays pending, is claimed again, and pushes
/// nothing twice.
async fn acknowledge(redis: &Pool, id: &str) {
    let acked = async {
        let mut conn = redis.get().await?;
        job_group::acknowledge(&mut conn, id).await?;
        Ok::<(), redis_conn::RedisConnError>(())
    }
    .await;
    if let Err(err) = acked {
        tracing::warn!(entry = id, %err, "push: cannot acknowledge job");
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn entry_ids_tell_when_a_job_was_written() {
        assert_eq!(written_ms("1700000000000-3"), Some(1_700_000_000_000));
        assert_eq!(written_ms("junk"), None);
    }
}
