//! The node's one blocking read: frames for this node's devices arrive on its delivery
//! stream and go to the registry for fan-out. Never one read per WebSocket.
//!
//! The loop starts at the current time (frames for sessions that do not exist yet are of
//! no use) and then follows the stream by entry id, so a Redis hiccup loses nothing the
//! stream still holds; anything lost beyond that shows up as a seq gap that sessions fill
//! from the outbox. Reconnects back off exponentially (`iris_shared::backoff`); every
//! command is also bounded on the client side, so a Redis that stops answering (a frozen
//! process, a dead link) fails the loop instead of hanging it, and a read is cut short when
//! the Sentinels name another master.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::delivery;
use iris_shared::redis_conn::{self, RedisEndpoint};

use crate::metrics;
use crate::registry::{Dispatch, Registry};
use crate::state::GatewayState;

/// Longest a read blocks; bounds how stale the loop's heartbeat can get while healthy.
const BLOCK_MS: u64 = 5_000;
/// Most entries taken per read.
const BATCH: usize = 1_000;
/// Least time between two renewals of the stream's expiry (also the write that finds a
/// demoted master): under load a read returns every few frames, and renewing after each
/// would be one more round trip per read.
const RENEW_EVERY: Duration = Duration::from_secs(1);

/// Runs the delivery loop until the process ends.
pub async fn run(endpoint: RedisEndpoint, state: GatewayState, registry: Addr<Registry>) {
    let mut last_id = format!("{}-0", now_ms());
    let mut backoff = Backoff::default();
    loop {
        let block = Duration::from_millis(BLOCK_MS);
        let connection = match redis_conn::blocking_connection(&endpoint, block).await {
            Ok(connection) => connection,
            Err(err) => {
                state.delivery_reading.store(false, Ordering::Relaxed);
                tracing::warn!(%err, "delivery loop: cannot connect to Redis");
                backoff.wait().await;
                continue;
            }
        };
        let follower = Follower {
            endpoint: &endpoint,
            state: &state,
            registry: &registry,
        };
        let addr = connection.addr.clone();
        let result = follower
            .follow(connection, &mut last_id, &mut backoff)
            .await;
        endpoint.note_refusal(&addr, &result);
        if let Err(err) = result {
            metrics::incr(&state.metrics.redis_errors_total);
            state.delivery_reading.store(false, Ordering::Relaxed);
            tracing::warn!(%err, "delivery loop: Redis error, reconnecting");
            backoff.wait().await;
        }
    }
}

/// What one connection's reading needs.
struct Follower<'a> {
    endpoint: &'a RedisEndpoint,
    state: &'a GatewayState,
    registry: &'a Addr<Registry>,
}

impl Follower<'_> {
    async fn follow(
        &self,
        mut connection: redis_conn::BlockingConnection,
        last_id: &mut String,
        backoff: &mut Backoff,
    ) -> redis::RedisResult<()> {
        let Self {
            endpoint,
            state,
            registry,
        } = *self;
        let node_id = &*state.node_id;
        let conn = &mut connection.conn;
        let addr = connection.addr.as_str();
        // A write first: a demoted or cut-off master fails here, before the first read.
        delivery::renew_node_stream(conn, node_id).await?;
        let mut renewed = std::time::Instant::now();
        state.delivery_beat.store(now_ms(), Ordering::Relaxed);
        state.delivery_reading.store(true, Ordering::Relaxed);
        loop {
            let read = delivery::read_node_stream(conn, node_id, last_id, BATCH, BLOCK_MS);
            // The connection's response timeout bounds the read; a failover cuts it short.
            let entries = tokio::select! {
                entries = read => entries?,
                () = endpoint.until_not_master(addr) => {
                    return Err(redis_conn::not_master(addr));
                }
            };
            if renewed.elapsed() >= RENEW_EVERY {
                delivery::renew_node_stream(conn, node_id).await?;
                renewed = std::time::Instant::now();
            }
            redis_conn::ensure_master(endpoint, addr).await?;
            state.delivery_beat.store(now_ms(), Ordering::Relaxed);
            state.delivery_reading.store(true, Ordering::Relaxed);
            backoff.reset();
            for entry in entries {
                metrics::incr(&state.metrics.deliveries_total);
                match entry.frame {
                    Some(frame) => registry.do_send(Dispatch {
                        frame: Arc::new(frame),
                    }),
                    None => tracing::warn!(id = %entry.id, "unreadable delivery entry skipped"),
                }
                *last_id = entry.id;
            }
        }
    }
}
