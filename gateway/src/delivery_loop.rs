//! The node's one blocking read: frames for this node's devices arrive on its delivery
//! stream and go to the registry for fan-out. Never one read per WebSocket.
//!
//! The loop starts at the current time (frames for sessions that do not exist yet are of
//! no use) and then follows the stream by entry id, so a Redis hiccup loses nothing the
//! stream still holds; anything lost beyond that shows up as a seq gap that sessions fill
//! from the outbox.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use redis::streams::StreamReadReply;

use iris_shared::clock::now_ms;
use iris_shared::delivery::{from_delivery_entry, NODE_STREAM_TTL_SECS};
use iris_shared::{keys, redis_conn};

use crate::metrics;
use crate::registry::{Dispatch, Registry};
use crate::state::GatewayState;

/// Longest a read blocks; bounds how stale the loop's heartbeat can get while healthy.
const BLOCK_MS: u64 = 5_000;
/// Most entries taken per read.
const BATCH: usize = 1_000;
/// Pause before reconnecting after a Redis error.
const RETRY_DELAY: Duration = Duration::from_millis(500);

/// Runs the delivery loop until the process ends.
pub async fn run(redis_url: String, state: GatewayState, registry: Addr<Registry>) {
    let stream = keys::node_delivery(&state.node_id);
    let mut last_id = format!("{}-0", now_ms());
    loop {
        let mut conn = match redis_conn::blocking_connection(&redis_url).await {
            Ok(conn) => conn,
            Err(err) => {
                tracing::warn!(%err, "delivery loop: cannot connect to Redis");
                tokio::time::sleep(RETRY_DELAY).await;
                continue;
            }
        };
        if let Err(err) = follow(&mut conn, &stream, &mut last_id, &state, &registry).await {
            tracing::warn!(%err, "delivery loop: Redis error, reconnecting");
            tokio::time::sleep(RETRY_DELAY).await;
        }
    }
}

async fn follow(
    conn: &mut redis::aio::MultiplexedConnection,
    stream: &str,
    last_id: &mut String,
    state: &GatewayState,
    registry: &Addr<Registry>,
) -> redis::RedisResult<()> {
    state.delivery_beat.store(now_ms(), Ordering::Relaxed);
    loop {
        let reply: Option<StreamReadReply> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(BATCH)
            .arg("BLOCK")
            .arg(BLOCK_MS)
            .arg("STREAMS")
            .arg(stream)
            .arg(last_id.as_str())
            .query_async(conn)
            .await?;
        // Keep the stream alive while this node is; a dead node's stream expires.
        redis::cmd("EXPIRE")
            .arg(stream)
            .arg(NODE_STREAM_TTL_SECS)
            .query_async::<()>(conn)
            .await?;
        state.delivery_beat.store(now_ms(), Ordering::Relaxed);
        for entry in reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids) {
            metrics::incr(&state.metrics.deliveries_total);
            match from_delivery_entry(&entry) {
                Some(frame) => registry.do_send(Dispatch {
                    frame: Arc::new(frame),
                }),
                None => tracing::warn!(id = %entry.id, "unreadable delivery entry skipped"),
            }
            *last_id = entry.id;
        }
    }
}
