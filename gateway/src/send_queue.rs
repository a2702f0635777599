//! The bytes queued for one session: frames the registry handed to it that it has not yet
//! written to its socket.
//!
//! A session whose socket cannot take more stops running (its writes wait for the
//! socket), so frames for it would pile up in its mailbox without bound. The registry
//! charges every frame it queues here and the session releases it when handling it; when
//! the queue is at its limit the registry keeps a bounded backlog instead (see
//! `backlog.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris_shared::delivery::RoutedFrame;

/// Per-frame bookkeeping beyond its JSON (the envelope fields added at delivery, the
/// mailbox entry), so that many tiny frames also count.
const FRAME_OVERHEAD: usize = 64;

/// Bytes queued for one session; shared by the registry and the session.
#[derive(Debug, Default)]
pub struct SendQueue {
    bytes: AtomicUsize,
}

/// What a frame weighs in a send queue.
pub fn weight(frame: &RoutedFrame) -> usize {
    frame.frame_json.len() + FRAME_OVERHEAD
}

impl SendQueue {
    /// Bytes queued now.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Queues `bytes` more.
    pub fn charge(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The session handled `bytes` worth of frames.
    pub fn release(&self, bytes: usize) {
        // Saturating: a release never makes the queue look negative.
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |queued| {
                Some(queued.saturating_sub(bytes))
            });
    }

    /// Whether `bytes` more fit under `limit`. A frame always fits an empty queue, so one
    /// frame larger than the limit still goes through.
    pub fn fits(&self, bytes: usize, limit: usize) -> bool {
        let queued = self.bytes();
        queued == 0 || queued + bytes <= limit
    }
}

/// How much a session may lag before the registry stops queueing for it, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct SendQueueLimits {
    /// Bytes queued for one session before frames go to its backlog instead.
    pub max_bytes: usize,
    /// How long a session may stay behind before it is closed as a slow consumer.
    pub slow_after: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_fit_until_the_limit_and_an_empty_queue_takes_anything() {
        let queue = SendQueue::default();
        assert!(queue.fits(5_000, 1_000), "an empty queue takes a big frame");
        queue.charge(900);
        assert!(queue.fits(100, 1_000));
        assert!(!queue.fits(101, 1_000));
        queue.release(900);
        assert_eq!(queue.bytes(), 0);
        queue.release(10);
        assert_eq!(queue.bytes(), 0, "releases saturate at zero");
    }
}
