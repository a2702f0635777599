//! How the registry reaches one session of its node: the session's recipients, its send
//! queue, and the backlog it is owed while behind (handed over once its queue drains, or
//! the session closed as too slow).

use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use iris_shared::delivery::RoutedFrame;

use super::{Backpressure, Deliver, Restarting};
use crate::backend_notice::BackendNotice;
use crate::backlog::{Backlog, Kept};
use crate::metrics::{self, Metrics};
use crate::send_queue::{self, SendQueue, SendQueueLimits};

/// How the registry reaches one session.
pub(super) struct SessionHandle {
    pub(super) device_id: String,
    pub(super) deliver: Recipient<Deliver>,
    pub(super) drain: Recipient<Restarting>,
    pub(super) backend: Recipient<BackendNotice>,
    pub(super) backpressure: Recipient<Backpressure>,
    pub(super) queue: Arc<SendQueue>,
    /// Frames owed while the session is behind.
    pub(super) backlog: Option<Backlog>,
    /// Told to close as a slow consumer: nothing more is queued for it.
    pub(super) closing: bool,
}

impl SessionHandle {
    /// Queues `frame` for the session, or keeps it in the session's backlog.
    pub(super) fn offer(
        &mut self,
        frame: &Arc<RoutedFrame>,
        limits: SendQueueLimits,
        metrics: &Metrics,
    ) {
        if self.closing {
            if frame.seq.is_some() {
                metrics::incr(&metrics.frames_left_in_outbox_total);
            }
            return;
        }
        let weight = send_queue::weight(frame);
        // Revocation notices close the session: they never wait behind a backlog.
        let notice = frame.revoked_token.is_some();
        if self.backlog.is_none() && (notice || self.queue.fits(weight, limits.max_bytes)) {
            self.queue.charge(weight);
            self.deliver.do_send(Deliver {
                frame: frame.clone(),
            });
            return;
        }
        let backlog = self.backlog.get_or_insert_with(|| {
            metrics::incr(&metrics.send_queue_overflows_total);
            Backlog::new(Instant::now())
        });
        match backlog.keep(frame.clone()) {
            Kept::Skipped => metrics::incr(&metrics.frames_left_in_outbox_total),
            Kept::Live {
                coalesced,
                dropped_oldest,
            } => {
                if coalesced || dropped_oldest {
                    metrics::incr(&metrics.frames_coalesced_total);
                }
            }
        }
    }

    /// A lagging session either catches up (its queue drained to half) or, behind for too
    /// long, is told to close.
    pub(super) fn check_lag(&mut self, now: Instant, limits: SendQueueLimits, metrics: &Metrics) {
        let Some(backlog) = &self.backlog else { return };
        if backlog.age(now) >= limits.slow_after {
            self.backlog = None;
            self.closing = true;
            metrics::incr(&metrics.slow_consumers_total);
            self.backpressure.do_send(Backpressure::TooSlow);
        } else if self.queue.bytes() <= limits.max_bytes / 2 {
            let frames = self
                .backlog
                .take()
                .map(Backlog::into_catch_up)
                .unwrap_or_default();
            let bytes = frames.live.iter().map(|f| send_queue::weight(f)).sum();
            self.queue.charge(bytes);
            self.backpressure
                .do_send(Backpressure::CatchUp { frames, bytes });
        }
    }
}
