//! The per-IP `hello` attempt limit: one token bucket per client address, in node memory,
//! shared by every session of the node. Each `hello` takes a token whether it then pairs
//! or fails, so guessing tokens from one address is as slow as the limit.
//!
//! The map is bounded: a new address at capacity first drops every bucket that has
//! refilled completely (it would behave like a new one anyway), then, if that freed too
//! little, the least recently used tenth. IPv6 clients are counted per /64, the block one
//! host usually holds.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::Instant;

use crate::rate_limit::TokenBucket;

/// Addresses tracked at most; beyond this the least recently seen are forgotten.
pub const MAX_TRACKED_ADDRESSES: usize = 100_000;

/// `hello` budgets per client address.
#[derive(Debug)]
pub struct HelloLimiter {
    per_second: f64,
    burst: u32,
    capacity: usize,
    buckets: Mutex<HashMap<IpAddr, TokenBucket>>,
}

impl HelloLimiter {
    /// Allows `per_second` attempts on average and `burst` at once per address, tracking
    /// at most `capacity` addresses.
    pub fn new(per_second: f64, burst: u32, capacity: usize) -> Self {
        Self {
            per_second,
            burst,
            capacity: capacity.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one attempt for `ip`; `false` means it is over the limit.
    pub fn allow(&self, ip: IpAddr) -> bool {
        self.allow_at(ip, Instant::now())
    }

    fn allow_at(&self, ip: IpAddr, now: Instant) -> bool {
        let key = bucket_key(ip);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.contains_key(&key) && buckets.len() >= self.capacity {
            evict(&mut buckets, self.capacity, now);
        }
        buckets
            .entry(key)
            .or_insert_with(|| TokenBucket::with_rate(self.per_second, self.burst, now))
            .take_at(now)
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.buckets.lock().unwrap().len()
    }
}

/// Makes room for at least one address.
fn evict(buckets: &mut HashMap<IpAddr, TokenBucket>, capacity: usize, now: Instant) {
    buckets.retain(|_, bucket| !bucket.is_full_at(now));
    let target = capacity - capacity.div_ceil(10);
    if buckets.len() <= target {
        return;
    }
    let mut by_use: Vec<(Instant, IpAddr)> = buckets
        .iter()
        .map(|(ip, bucket)| (bucket.last_used(), *ip))
        .collect();
    let excess = buckets.len() - target;
    by_use.select_nth_unstable(excess - 1);
    for (_, ip) in &by_use[..excess] {
        buckets.remove(ip);
    }
}

/// The address a bucket is kept under: IPv4 as is (also when mapped into IPv6), IPv6 by
/// its /64 prefix.
fn bucket_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn v4(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn each_address_has_its_own_budget() {
        let limiter = HelloLimiter::new(1.0, 2, 100);
        let now = Instant::now();
        assert!(limiter.allow_at(v4(1), now));
        assert!(limiter.allow_at(v4(1), now));
        assert!(!limiter.allow_at(v4(1), now));
        assert!(limiter.allow_at(v4(2), now));
        assert!(limiter.allow_at(v4(1), now + Duration::from_secs(1)));
    }

    #[test]
    fn ipv6_hosts_of_one_slash_64_share_a_budget() {
        let limiter = HelloLimiter::new(0.0, 1, 100);
        let now = Instant::now();
        let first: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let same_block: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let other_block: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert!(limiter.allow_at(first, now));
        assert!(!limiter.allow_at(same_block, now));
        assert!(limiter.allow_at(other_block, now));
    }

    #[test]
    fn the_map_stays_bounded_and_forgets_refilled_addresses_first() {
        let limiter = HelloLimiter::new(1.0, 1, 10);
        let start = Instant::now();
        for last in 0..10 {
            assert!(limiter.allow_at(v4(last), start));
        }
        assert_eq!(limiter.tracked(), 10);
        // Two seconds later every bucket is full again: all are forgotten for the new one.
        assert!(limiter.allow_at(v4(200), start + Duration::from_secs(2)));
        assert_eq!(limiter.tracked(), 1);
    }

    #[test]
    fn at_capacity_the_least_recently_used_are_evicted() {
        let limiter = HelloLimiter::new(0.0, 1, 10);
        let start = Instant::now();
        for last in 0..10 {
            limiter.allow_at(v4(last), start + Duration::from_millis(u64::from(last)));
        }
        assert!(limiter.allow_at(v4(100), start + Duration::from_secs(1)));
        assert!(limiter.tracked() <= 10);
        // The newest addresses are still limited; the oldest was forgotten.
        assert!(!limiter.allow_at(v4(9), start + Duration::from_secs(1)));
        assert!(limiter.allow_at(v4(0), start + Duration::from_secs(1)));
    }
}
