//! The per-address WebSocket upgrade limit (`IRIS_UPGRADE_RATE`, `IRIS_UPGRADE_BURST`): one
//! token bucket per client address, the same bounded map the `hello` limit keeps (IPv6 per
//! /64), taken by every upgrade attempt before a session exists. The default burst lets a
//! NAT of hundreds of phones reconnect at once; a flood from one address is refused with
//! 429 past it, before it can hold connections until the `hello` timeout.

use std::net::IpAddr;

use crate::hello_limit::{HelloLimiter, MAX_TRACKED_ADDRESSES};

/// Upgrade budgets per client address.
#[derive(Debug)]
pub struct UpgradeLimiter(HelloLimiter);

impl UpgradeLimiter {
    /// Allows `per_second` upgrades on average and `burst` at once per address.
    pub fn new(per_second: f64, burst: u32) -> Self {
        Self(HelloLimiter::new(per_second, burst, MAX_TRACKED_ADDRESSES))
    }

    /// Takes one upgrade for `ip`; `false` means it is over the limit.
    pub fn allow(&self, ip: IpAddr) -> bool {
        self.0.allow(ip)
    }
}
