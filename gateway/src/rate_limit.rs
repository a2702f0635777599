//! A token bucket: how many frames a device may send, sustained and in a burst.

use std::time::Instant;

/// Frames allowed per second on average, and in a burst.
#[derive(Debug)]
pub struct TokenBucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    refilled: Instant,
}

impl TokenBucket {
    /// A full bucket allowing `per_second` on average and `burst` at once.
    pub fn new(per_second: u32, burst: u32) -> Self {
        Self::with_rate(f64::from(per_second), burst, Instant::now())
    }

    /// A full bucket allowing `per_second` (may be fractional) on average and `burst` at
    /// once, as of `now`.
    pub fn with_rate(per_second: f64, burst: u32, now: Instant) -> Self {
        Self {
            per_second: per_second.max(0.0),
            burst: f64::from(burst.max(1)),
            tokens: f64::from(burst.max(1)),
            refilled: now,
        }
    }

    /// Whether the bucket has refilled completely by `now`: it then behaves exactly like
    /// a new one, so forgetting it loses nothing.
    pub fn is_full_at(&self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens + elapsed * self.per_second >= self.burst
    }

    /// Takes one token if there is one; `false` means the frame is over the limit.
    pub fn take(&mut self) -> bool {
        self.take_at(Instant::now())
    }

    /// When a token was last asked for (or the bucket made).
    pub fn last_used(&self) -> Instant {
        self.refilled
    }

    /// [`Self::take`] at a given time.
    pub fn take_at(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_burst_is_allowed_then_frames_wait_for_the_refill() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10, 3);
        assert!((0..3).all(|_| bucket.take_at(start)));
        assert!(!bucket.take_at(start));
        assert!(bucket.take_at(start + Duration::from_millis(100)));
        assert!(!bucket.take_at(start + Duration::from_millis(100)));
    }
}
