//! Handling one push job: which of the account's devices to push, and pushing each.
//!
//! The devices pushed are those with a target some configured service reaches, minus those
//! online right now (they get the frame over their WebSocket). Each push is claimed first
//! (`iris_shared::push::claim_send`), so a job handled twice pushes a device once, then
//! passes the device's rate limit (this worker's throttle, then the device's window in
//! Redis, which spaces pushes from different workers) and is delivered. Pushes to
//! different devices run at once.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use iris_shared::clock::now_ms;
use iris_shared::presence;
use iris_shared::push::{self, PushJob, PushTarget};
use iris_shared::redis_conn::Pool;
use iris_shared::redis_conn::RedisConnError;

use super::channels::Channels;
use super::throttle::{Passage, Throttle};

/// One device's push, as it waits in the rate limit.
struct DevicePush {
    device: String,
    job: Arc<PushJob>,
    target: PushTarget,
}

/// What handling one job did, for the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    /// Devices skipped because they were online.
    pub online: usize,
    /// Devices skipped because this push was already claimed (the job was handled before).
    pub already_pushed: usize,
    /// Devices whose push went out (sent or given up) carrying this job's content.
    pub pushed: usize,
    /// Devices whose push was replaced by a newer one inside the rate-limit window.
    pub merged: usize,
}

/// Handles push jobs: decides who is pushed and pushes them.
pub struct Fanout {
    redis: Pool,
    channels: Channels,
    throttle: Throttle<(String, String), DevicePush>,
    min_interval: Duration,
    /// This worker, as the holder of the push windows it takes.
    node_id: String,
}

impl Fanout {
    /// Pushes through `channels` as worker `node_id`, at most one push per device per
    /// `min_interval` across all workers.
    pub fn new(redis: Pool, channels: Channels, min_interval: Duration, node_id: String) -> Self {
        Self {
            redis,
            channels,
            throttle: Throttle::new(min_interval),
            min_interval,
            node_id,
        }
    }

    /// Waits until this worker holds `device`'s push window, i.e. no worker pushed it in the
    /// last interval. A Redis error lets the push go: a wake-up sent early beats one lost.
    async fn hold_window(&self, account: &str, device: &str) {
        if self.min_interval.is_zero() {
            return;
        }
        loop {
            let claimed = match self.redis.get().await {
                Ok(mut conn) => {
                    push::claim_window(&mut conn, account, device, &self.node_id, self.min_interval)
                        .await
                        .map_err(|err| err.to_string())
                }
                Err(err) => Err(err.to_string()),
            };
            match claimed {
                Ok(None) => return,
                Ok(Some(left)) => tokio::time::sleep(left.max(Duration::from_millis(1))).await,
                Err(err) => {
                    tracing::warn!(%err, %account, %device, "push window unknown; pushing anyway");
                    return;
                }
            }
        }
    }

    /// Handles `job`; returns once every push it causes was sent or given up. A Redis error
    /// means the job was not (fully) handled and should be tried again.
    pub async fn handle(&self, job: PushJob) -> Result<Report, RedisConnError> {
        let mut report = Report::default();
        let recipients = {
            let mut conn = self.redis.get().await?;
            let targets = push::targets(&mut conn, &job.account).await?;
            if targets.is_empty() {
                return Ok(report);
            }
            let live = conn.live_gateways();
            let online = presence::online_devices(&mut conn, &live, &job.account, now_ms()).await?;
            let mut recipients = Vec::new();
            for (device, target) in targets {
                if online.contains(&device) {
                    report.online += 1;
                } else if !self.channels.reaches(&target) {
                    continue;
                } else if push::claim_send(&mut conn, &job.account, &device, job.seq).await? {
                    recipients.push((device, target));
                } else {
                    report.already_pushed += 1;
                }
            }
            recipients
            // The pooled connection goes back here, before the (slow) sends.
        };
        let job = Arc::new(job);
        let passages = join_all(recipients.into_iter().map(|(device, target)| {
            let key = (job.account.clone(), device.clone());
            let item = DevicePush {
                device,
                job: job.clone(),
                target,
            };
            self.throttle.run(key, item, |latest| async move {
                self.hold_window(&latest.job.account, &latest.device).await;
                let delivered = self
                    .channels
                    .deliver(&latest.device, &latest.job, &latest.target)
                    .await;
                if delivered.sent == 0 {
                    tracing::warn!(account = %latest.job.account, device = %latest.device,
                        seq = latest.job.seq, "no push service took the notification");
                }
            })
        }))
        .await;
        for passage in passages {
            match passage {
                Passage::Direct | Passage::Delayed => report.pushed += 1,
                Passage::Merged => report.merged += 1,
            }
        }
        Ok(report)
    }
}
