//! Until when each held lease is known to be this worker's: a lease renewed (or taken) by a
//! command sent at T cannot expire, so no other worker can hold it, before T + TTL. The
//! inbox skips its per-read check of the lease in Redis while that holds, which takes a
//! round trip off every turn's way to its chat; past it (a late tick, a stalled link) it
//! asks Redis as before. The keeper withdraws a lease here before it gives the lease up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iris_shared::partition::Partition;

/// How long before a lease's expiry its confirmation ends (clock rates differ a little).
pub const CONFIRMATION_MARGIN: Duration = Duration::from_millis(100);

/// The confirmed leases, shared by the keeper (writes) and the inbox readers (reads).
#[derive(Debug, Clone, Default)]
pub struct LeaseConfirmations(Arc<Mutex<HashMap<Partition, (u64, Instant)>>>);

impl LeaseConfirmations {
    /// The lease of `partition` with `fence` was renewed or taken by a command sent at
    /// `sent`, for `ttl`.
    pub fn confirm(&self, partition: Partition, fence: u64, sent: Instant, ttl: Duration) {
        let until = sent + ttl.saturating_sub(CONFIRMATION_MARGIN);
        self.lock().insert(partition, (fence, until));
    }

    /// The leases of `partitions` are no longer known to be this worker's.
    pub fn withdraw(&self, partitions: impl IntoIterator<Item = Partition>) {
        let mut confirmed = self.lock();
        for partition in partitions {
            confirmed.remove(&partition);
        }
    }

    /// Whether this worker surely holds the lease of `partition` with `fence` at `now`.
    pub fn holds(&self, partition: Partition, fence: u64, now: Instant) -> bool {
        self.lock()
            .get(&partition)
            .is_some_and(|&(held, until)| held == fence && now < until)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Partition, (u64, Instant)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_confirmed_until_its_ttl_less_the_margin_and_only_with_its_fence() {
        let confirmations = LeaseConfirmations::default();
        let sent = Instant::now();
        let ttl = Duration::from_secs(2);
        confirmations.confirm(4, 17, sent, ttl);
        assert!(confirmations.holds(4, 17, sent + Duration::from_millis(1_800)));
        assert!(!confirmations.holds(4, 17, sent + ttl - CONFIRMATION_MARGIN));
        assert!(!confirmations.holds(4, 16, sent), "another fence");
        assert!(!confirmations.holds(5, 17, sent), "another partition");
        confirmations.withdraw([4]);
        assert!(!confirmations.holds(4, 17, sent));
    }
}
