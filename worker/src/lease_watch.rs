//! Listens for other workers announcing that they gave leases up (a drain, or a handover for
//! balance) and asks the lease keeper to look for free partitions at once, so a released
//! partition has a new owner within milliseconds rather than at the next periodic tick.

use actix::Addr;
use futures_util::StreamExt;

use iris_shared::backoff::Backoff;
use iris_shared::keys;
use iris_shared::redis_conn::RedisEndpoint;

use crate::lease_keeper::{LeaseKeeper, Rescan};

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
    let mut pubsub = endpoint.pubsub().await?;
    pubsub.subscribe(keys::leases_released()).await?;
    backoff.reset();
    // Anything released while this worker was not yet listening is found by this scan.
    keeper.do_send(Rescan);
    let mut messages = pubsub.on_message();
    while messages.next().await.is_some() {
        keeper.do_send(Rescan);
    }
    Ok(())
}
