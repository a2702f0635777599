//! Listens for other workers announcing that they gave leases up (a drain, or a handover for
//! balance) and asks the lease keeper to look for free partitions at once, so a released
//! partition has a new owner within milliseconds rather than at the next periodic tick.

use std::time::Duration;

use actix::Addr;
use futures_util::StreamExt;

use iris_shared::keys;

use crate::lease_keeper::{LeaseKeeper, Rescan};

/// Pause before resubscribing after a Redis error.
const RETRY_DELAY: Duration = Duration::from_millis(500);

/// Follows the announcements until the process ends.
pub async fn run(redis_url: String, keeper: Addr<LeaseKeeper>) {
    loop {
        if let Err(err) = follow(&redis_url, &keeper).await {
            tracing::warn!(%err, "lease announcements: Redis error, resubscribing");
        }
        tokio::time::sleep(RETRY_DELAY).await;
    }
}

async fn follow(redis_url: &str, keeper: &Addr<LeaseKeeper>) -> redis::RedisResult<()> {
    let client = redis::Client::open(redis_url)?;
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(keys::leases_released()).await?;
    // Anything released while this worker was not yet listening is found by this scan.
    keeper.do_send(Rescan);
    let mut messages = pubsub.on_message();
    while messages.next().await.is_some() {
        keeper.do_send(Rescan);
    }
    Ok(())
}
