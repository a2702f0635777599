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
use iris_shared::delivery::{RoutedFrame, NODE_STREAM_TTL_SECS};
use iris_shared::keys;
use iris_shared::redis_conn::{self, RedisEndpoint};

use crate::metrics;
use crate::registry::{Dispatch, Registry};
use crate::state::GatewayState;

/// An `XREAD` reply of one stream, decoded straight into entry ids and field pairs (moved
/// out of the reply, no map per entry): `[(stream, [(id, [(field, value)])])]`.
type ReadReply = Vec<(String, Vec<(String, Vec<(String, String)>)>)>;

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
    let stream = keys::node_delivery(&state.node_id);
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
            stream: &stream,
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
    stream: &'a str,
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
            stream,
            state,
            registry,
        } = *self;
        let conn = &mut connection.conn;
        let addr = connection.addr.as_str();
        // A write first: a demoted or cut-off master fails here, before the first read.
        expire_stream(conn, stream).await?;
        let mut renewed = std::time::Instant::now();
        state.delivery_beat.store(now_ms(), Ordering::Relaxed);
        state.delivery_reading.store(true, Ordering::Relaxed);
        loop {
            let mut read = redis::cmd("XREAD");
            read.arg("COUNT")
                .arg(BATCH)
                .arg("BLOCK")
                .arg(BLOCK_MS)
                .arg("STREAMS")
                .arg(stream)
                .arg(last_id.as_str());
            // The connection's response timeout bounds the read; a failover cuts it short.
            let reply = tokio::select! {
                reply = read.query_async::<Option<ReadReply>>(conn) => reply?,
                () = endpoint.until_not_master(addr) => {
                    return Err(redis_conn::not_master(addr));
                }
            };
            if renewed.elapsed() >= RENEW_EVERY {
                expire_stream(conn, stream).await?;
                renewed = std::time::Instant::now();
            }
            redis_conn::ensure_master(endpoint, addr).await?;
            state.delivery_beat.store(now_ms(), Ordering::Relaxed);
            state.delivery_reading.store(true, Ordering::Relaxed);
            backoff.reset();
            let entries = reply.into_iter().flatten().flat_map(|(_stream, ids)| ids);
            for (id, fields) in entries {
                metrics::incr(&state.metrics.deliveries_total);
                match RoutedFrame::from_pairs(fields, None, None) {
                    Some(frame) => registry.do_send(Dispatch {
                        frame: Arc::new(frame),
                    }),
                    None => tracing::warn!(%id, "unreadable delivery entry skipped"),
                }
                *last_id = id;
            }
        }
    }
}

/// Keeps the stream alive while this node is; a dead node's stream expires. On a demoted
/// master this write fails (READONLY), and the reconnect finds the new one.
async fn expire_stream(
    conn: &mut redis::aio::MultiplexedConnection,
    stream: &str,
) -> redis::RedisResult<()> {
    redis::cmd("EXPIRE")
        .arg(stream)
        .arg(NODE_STREAM_TTL_SECS)
        .query_async::<()>(conn)
        .await
}
