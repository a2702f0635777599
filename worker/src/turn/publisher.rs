//! The worker's frame writer: [`iris_shared::publish`], counted in the worker's metrics.

use iris_shared::redis_conn::Pool;

pub use iris_shared::publish::{ChatScope, Outgoing, PublishError};

use crate::metrics;

/// Writes frames for chats.
#[derive(Clone)]
pub struct Publisher {
    redis: Pool,
}

impl Publisher {
    /// A publisher over `redis`.
    pub fn new(redis: Pool) -> Self {
        Self { redis }
    }

    /// Writes one frame: outbox (never-dropped frames) then live delivery. A frame an
    /// earlier attempt already wrote is delivered live again, never appended twice.
    pub async fn emit(&self, scope: &ChatScope, outgoing: Outgoing) -> Result<(), PublishError> {
        let frame_type = outgoing.frame.body.type_name();
        let write = async {
            let mut conn = self.redis.get().await?;
            iris_shared::publish::publish(&mut conn, scope, outgoing).await
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
