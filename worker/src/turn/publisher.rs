//! The worker's frame writer: [`iris_shared::publish`], counted in the worker's metrics.
//!
//! A live-only frame of a chat whose partition lease is surely still this worker's
//! (`lease_confirmations`) is published with one command, without the fence check: no
//! newer owner can exist that the fence would have to keep out.

use std::time::Instant;

use iris_shared::partition::Partition;
use iris_shared::redis_conn::Pool;

pub use iris_shared::publish::{ChatScope, Outgoing, PublishError};

use crate::metrics;
use crate::partitions::lease_confirmations::LeaseConfirmations;

/// Writes frames for chats.
#[derive(Clone)]
pub struct Publisher {
    redis: Pool,
    confirmations: LeaseConfirmations,
}

impl Publisher {
    /// A publisher over `redis`, trusting the leases `confirmations` vouches for.
    pub fn new(redis: Pool, confirmations: LeaseConfirmations) -> Self {
        Self {
            redis,
            confirmations,
        }
    }

    /// Writes one frame: outbox (never-dropped frames) then live delivery. A frame an
    /// earlier attempt already wrote is delivered live again, never appended twice.
    pub async fn emit(&self, scope: &ChatScope, outgoing: Outgoing) -> Result<(), PublishError> {
        self.write(scope, outgoing, false).await
    }

    /// Writes a live-only frame of a chat of `partition`: with one `PUBLISH` while the
    /// partition's lease is surely held with the scope's fence, else as [`Self::emit`].
    pub async fn emit_live(
        &self,
        scope: &ChatScope,
        partition: Partition,
        outgoing: Outgoing,
    ) -> Result<(), PublishError> {
        let held = scope
            .fence
            .is_some_and(|fence| self.confirmations.holds(partition, fence, Instant::now()));
        self.write(scope, outgoing, held).await
    }

    async fn write(
        &self,
        scope: &ChatScope,
        outgoing: Outgoing,
        lease_held: bool,
    ) -> Result<(), PublishError> {
        let frame_type = outgoing.frame.body.type_name();
        let write = async {
            let mut conn = self.redis.get().await?;
            if lease_held {
                iris_shared::publish::publish_live(&mut conn, scope, outgoing).await
            } else {
                iris_shared::publish::publish(&mut conn, scope, outgoing).await
            }
        };
        let result = write.await;
        let stats = metrics::get();
        match &result {
            Ok(published) => {
                stats.frames_published_total.incr(frame_type);
                if published.appended {
                    metrics::incr(&stats.outbox_appends_total);
                }
            }
            Err(PublishError::Fenced) => metrics::incr(&stats.fenced_total),
            Err(PublishError::Redis(_)) => metrics::incr(&stats.redis_errors_total),
        }
        result.map(|_| ())
    }
}
