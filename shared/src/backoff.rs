//! Reconnect pacing for every loop that talks to Redis: exponential backoff with jitter,
//! capped, and reset by the first success, so a Redis outage is not met by every node
//! hammering it in lockstep, and a short blip is retried almost at once.

use std::time::Duration;

/// First pause after a failure.
pub const INITIAL_DELAY: Duration = Duration::from_millis(100);
/// Longest pause between attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(5);

/// The pause before the next attempt of one loop.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    /// Upper bound of the next pause; doubles on every failure up to `max`.
    ceiling: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(INITIAL_DELAY, MAX_DELAY)
    }
}

impl Backoff {
    /// Pauses from `initial`, doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            ceiling: initial,
        }
    }

    /// The pause to take after a failure: uniformly between half the current ceiling and
    /// the ceiling (jitter keeps nodes from retrying in lockstep); the ceiling then doubles.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.ceiling;
        self.ceiling = (self.ceiling * 2).min(self.max);
        let half = ceiling / 2;
        let spread = u64::try_from((ceiling - half).as_micros()).unwrap_or(u64::MAX);
        half + Duration::from_micros(rand::random_range(0..=spread))
    }

    /// Sleeps for [`Backoff::next_delay`].
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    /// An attempt succeeded: the next failure starts from the initial pause again.
    pub fn reset(&mut self) {
        self.ceiling = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_to_the_cap_and_restart_after_a_success() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        let first = backoff.next_delay();
        assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&first));
        let later: Vec<Duration> = (0..20).map(|_| backoff.next_delay()).collect();
        assert!(later.iter().all(|d| *d <= Duration::from_secs(5)));
        assert!(later[19] >= Duration::from_millis(2_500), "{later:?}");
        backoff.reset();
        assert!(backoff.next_delay() <= Duration::from_millis(100));
    }
}
