//! The node's one subscription: the live channels of the accounts whose devices it holds
//! (Redis Pub/Sub, one connection for all of them); each frame goes to the registry for
//! fan-out. Never one subscription per WebSocket. Which accounts: `live_subscriptions.rs`.
//!
//! Pub/Sub keeps nothing for a subscriber that is away, so every time the subscription is
//! made (again) the sessions are told to catch up from the outbox: whatever was published
//! while the node was not listening is there. A frame missed otherwise shows up as a seq
//! gap the session fills. The connection is pinged every [`PING_EVERY`], so a Redis that
//! stops answering (a frozen process, a dead link) fails the subscription instead of
//! leaving it silent, and it is made again on the new master when the Sentinels name one.
//! Reconnects back off exponentially (`iris_shared::backoff`).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use futures_util::StreamExt;
use redis::aio::PubSubSink;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::delivery;
use iris_shared::keys::AccountKeys;
use iris_shared::redis_conn::{self, RedisEndpoint, COMMAND_TIMEOUT};

use crate::backend_notice::BackendNotice;
use crate::live_subscriptions::{self, Change, Changes};
use crate::metrics;
use crate::registry::{Dispatch, Registry};
use crate::state::GatewayState;

/// How often the subscription's connection is checked with a `PING` (and its server for
/// still being the master).
const PING_EVERY: Duration = Duration::from_secs(2);
/// Most channels named in one `SUBSCRIBE` when subscribing again.
const SUBSCRIBE_BATCH: usize = 1_000;

/// The subscription's state across connections.
struct Subscription {
    endpoint: RedisEndpoint,
    state: GatewayState,
    registry: Addr<Registry>,
    changes: Changes,
    /// The accounts listened to (subscribed while connected).
    listened: HashSet<String>,
}

/// Runs the subscription until the process ends.
pub async fn run(
    endpoint: RedisEndpoint,
    state: GatewayState,
    registry: Addr<Registry>,
    changes: Changes,
) {
    let mut subscription = Subscription {
        endpoint,
        state,
        registry,
        changes,
        listened: HashSet::new(),
    };
    let mut backoff = Backoff::default();
    loop {
        let result = subscription.follow(&mut backoff).await;
        subscription
            .state
            .delivery_reading
            .store(false, Ordering::Relaxed);
        if let Err(err) = result {
            metrics::incr(&subscription.state.metrics.redis_errors_total);
            tracing::warn!(%err, "live subscription: Redis error, subscribing again");
        }
        subscription.pause(backoff.next_delay()).await;
    }
}

fn timed_out(what: &str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} timed out"),
    ))
}

fn channels<'a>(accounts: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    accounts
        .into_iter()
        .map(|account| AccountKeys::new(account).live())
        .collect()
}

impl Subscription {
    /// Waits `delay` before connecting again, taking changes meanwhile: a join resolves at
    /// once (its account is subscribed with the others on connecting).
    async fn pause(&mut self, delay: Duration) {
        let sleep = tokio::time::sleep(delay);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                () = &mut sleep => return,
                change = self.changes.recv() => {
                    let Some(change) = change else { return };
                    let applied = live_subscriptions::apply(&mut self.listened, vec![change]);
                    for confirmation in applied.confirmations {
                        let _ = confirmation.send(());
                    }
                }
            }
        }
    }

    async fn follow(&mut self, backoff: &mut Backoff) -> redis::RedisResult<()> {
        let (pubsub, addr) = self.endpoint.pubsub().await?;
        let (mut sink, mut messages) = pubsub.split();
        let everything = channels(&self.listened);
        for batch in everything.chunks(SUBSCRIBE_BATCH) {
            tokio::time::timeout(COMMAND_TIMEOUT, sink.subscribe(batch))
                .await
                .map_err(|_| timed_out("subscribing"))??;
        }
        let state = &self.state;
        state.delivery_beat.store(now_ms(), Ordering::Relaxed);
        state.delivery_reading.store(true, Ordering::Relaxed);
        backoff.reset();
        self.registry.do_send(BackendNotice::LiveResumed);
        let endpoint = self.endpoint.clone();
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
                    self.dispatch(message.get_payload_bytes());
                }
                change = self.changes.recv() => {
                    let Some(change) = change else { return Ok(()) };
                    self.change(&mut sink, change).await?;
                }
                _ = pings.tick() => {
                    tokio::time::timeout(COMMAND_TIMEOUT, sink.ping::<redis::Value>())
                        .await
                        .map_err(|_| timed_out("pinging the subscription"))??;
                    redis_conn::ensure_master(&endpoint, &addr).await?;
                    self.state.delivery_beat.store(now_ms(), Ordering::Relaxed);
                }
                () = &mut demoted => return Err(redis_conn::not_master(&addr)),
            }
        }
    }

    fn dispatch(&self, payload: &[u8]) {
        metrics::incr(&self.state.metrics.deliveries_total);
        let frame = std::str::from_utf8(payload).ok().and_then(delivery::decode);
        match frame {
            Some(frame) => self.registry.do_send(Dispatch {
                frame: Arc::new(frame),
            }),
            None => tracing::warn!("unreadable live message skipped"),
        }
    }

    /// Applies `first` and every change queued behind it: one `SUBSCRIBE` and one
    /// `UNSUBSCRIBE` at most, then the joins are answered. On an error the listened set
    /// is already the new one; it is subscribed when the connection is made again.
    async fn change(&mut self, sink: &mut PubSubSink, first: Change) -> redis::RedisResult<()> {
        let mut batch = vec![first];
        while let Ok(change) = self.changes.try_recv() {
            batch.push(change);
        }
        let applied = live_subscriptions::apply(&mut self.listened, batch);
        if !applied.subscribe.is_empty() {
            let channels = channels(&applied.subscribe);
            tokio::time::timeout(COMMAND_TIMEOUT, sink.subscribe(&channels))
                .await
                .map_err(|_| timed_out("subscribing"))??;
        }
        for confirmation in applied.confirmations {
            let _ = confirmation.send(());
        }
        if !applied.unsubscribe.is_empty() {
            let channels = channels(&applied.unsubscribe);
            tokio::time::timeout(COMMAND_TIMEOUT, sink.unsubscribe(&channels))
                .await
                .map_err(|_| timed_out("unsubscribing"))??;
        }
        Ok(())
    }
}
