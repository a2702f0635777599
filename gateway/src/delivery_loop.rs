//! The node's one subscription: frames for this node's devices arrive on its live channel
//! (Redis Pub/Sub) and go to the registry for fan-out. Never one subscription per WebSocket.
//!
//! Pub/Sub keeps nothing for a subscriber that is away, so every time the subscription is
//! made (again) the sessions are told to catch up from the outbox: whatever was published
//! while the node was not listening is there. A frame missed otherwise shows up as a seq
//! gap the session fills. The connection is pinged every [`PING_EVERY`], so a Redis that
//! stops answering (a frozen process, a dead link) fails the subscription instead of
//! leaving it silent, and it is made again on the new master when the Sentinels name one.
//! Reconnects back off exponentially (`iris_shared::backoff`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use futures_util::StreamExt;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::delivery;
use iris_shared::redis_conn::{self, RedisEndpoint, COMMAND_TIMEOUT};

use crate::backend_notice::BackendNotice;
use crate::metrics;
use crate::registry::{Dispatch, Registry};
use crate::state::GatewayState;

/// How often the subscription's connection is checked with a `PING` (and its server for
/// still being the master).
const PING_EVERY: Duration = Duration::from_secs(2);

/// Runs the subscription until the process ends.
pub async fn run(endpoint: RedisEndpoint, state: GatewayState, registry: Addr<Registry>) {
    let mut backoff = Backoff::default();
    loop {
        let result = follow(&endpoint, &state, &registry, &mut backoff).await;
        state.delivery_reading.store(false, Ordering::Relaxed);
        if let Err(err) = result {
            metrics::incr(&state.metrics.redis_errors_total);
            tracing::warn!(%err, "live subscription: Redis error, subscribing again");
        }
        backoff.wait().await;
    }
}

fn timed_out(what: &str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} timed out"),
    ))
}

async fn follow(
    endpoint: &RedisEndpoint,
    state: &GatewayState,
    registry: &Addr<Registry>,
    backoff: &mut Backoff,
) -> redis::RedisResult<()> {
    let (pubsub, addr) = endpoint.pubsub().await?;
    let (mut sink, mut messages) = pubsub.split();
    tokio::time::timeout(
        COMMAND_TIMEOUT,
        delivery::subscribe_node(&mut sink, &state.node_id),
    )
    .await
    .map_err(|_| timed_out("subscribing"))??;
    state.delivery_beat.store(now_ms(), Ordering::Relaxed);
    state.delivery_reading.store(true, Ordering::Relaxed);
    backoff.reset();
    registry.do_send(BackendNotice::LiveResumed);
    let demoted = endpoint.until_not_master(&addr);
    tokio::pin!(demoted);
    let mut pings = tokio::time::interval(PING_EVERY);
    pings.tick().await;
    loop {
        tokio::select! {
            message = messages.next() => {
                let Some(message) = message else {
                    return Err(redis::RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "the subscription's connection closed",
                    )));
                };
                metrics::incr(&state.metrics.deliveries_total);
                let frame = std::str::from_utf8(message.get_payload_bytes())
                    .ok()
                    .and_then(delivery::decode);
                match frame {
                    Some(frame) => registry.do_send(Dispatch { frame: Arc::new(frame) }),
                    None => tracing::warn!("unreadable live message skipped"),
                }
            }
            _ = pings.tick() => {
                tokio::time::timeout(COMMAND_TIMEOUT, sink.ping::<redis::Value>())
                    .await
                    .map_err(|_| timed_out("pinging the subscription"))??;
                redis_conn::ensure_master(endpoint, &addr).await?;
                state.delivery_beat.store(now_ms(), Ordering::Relaxed);
            }
            () = &mut demoted => return Err(redis_conn::not_master(&addr)),
        }
    }
}
