//! Listens for other workers announcing that they gave leases up (a drain, or a handover for
//! balance) and asks the lease keeper to look for free partitions at once, so a released
//! partition has a new owner within milliseconds rather than at the next periodic tick.
//!
//! Subscribing is bounded in time, and the subscription is dropped and made again on the
//! new master when the Sentinels name another one (a demoted master never fails the
//! subscription, it just stops hearing the announcements).

use actix::Addr;
use futures_util::StreamExt;

use iris_shared::backoff::Backoff;
use iris_shared::keys;
use iris_shared::redis_conn::{self, RedisEndpoint, COMMAND_TIMEOUT};

use crate::partitions::lease_keeper::{LeaseKeeper, Rescan};

/// Follows the announcements until the process ends.
pub async fn run(endpoint: RedisEndpoint, keeper: Addr<LeaseKeeper>) {
    let mut backoff = Backoff::default();
    loop {
        if let Err(err) = follow(&endpoint, &keeper, &mut backoff).await {
            tracing::warn!(%err, "lease announcements: Redis error, resubscribing");
        }
        backoff.wait().await;
    }
}

async fn follow(
    endpoint: &RedisEndpoint,
    keeper: &Addr<LeaseKeeper>,
    backoff: &mut Backoff,
) -> redis::RedisResult<()> {
    let (mut pubsub, addr) = endpoint.pubsub().await?;
    tokio::time::timeout(COMMAND_TIMEOUT, pubsub.subscribe(keys::leases_released()))
        .await
        .map_err(|_| {
            redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "subscribing timed out",
            ))
        })??;
    backoff.reset();
    // Anything released while this worker was not yet listening is found by this scan.
    keeper.do_send(Rescan);
    let mut messages = pubsub.on_message();
    let demoted = endpoint.until_not_master(&addr);
    tokio::pin!(demoted);
    loop {
        tokio::select! {
            message = messages.next() => {
                if message.is_none() {
                    return Ok(());
                }
                keeper.do_send(Rescan);
            }
            () = &mut demoted => return Err(redis_conn::not_master(&addr)),
        }
    }
}
