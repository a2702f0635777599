//! What every request handler and session of one gateway node shares.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use actix::Addr;
use iris_shared::media::store::MediaStore;
use iris_shared::redact::Secret;
use iris_shared::redis_conn::Pool;

use crate::config::SessionLimits;
use crate::hello_limit::HelloLimiter;
use crate::http_guard::UpgradeLimiter;
use crate::metrics::Metrics;
use crate::registry::Registry;

/// The delivery loop is considered dead when it has not completed a read for this long.
pub const DELIVERY_STALL_MS: u64 = 15_000;

/// Node-wide state, cloned into each worker thread of the HTTP server.
#[derive(Clone)]
pub struct GatewayState {
    /// This node's id (names its delivery stream and its presence entries).
    pub node_id: Arc<str>,
    /// Cluster-wide partition count.
    pub partitions: u32,
    /// Redis pool for ordinary commands.
    pub redis: Pool,
    /// The node's session registry.
    pub registry: Addr<Registry>,
    /// Counters and gauges.
    pub metrics: Arc<Metrics>,
    /// Session timing and limits.
    pub limits: SessionLimits,
    /// `hello` attempts per client address.
    pub hello_limiter: Arc<HelloLimiter>,
    /// WebSocket upgrade attempts per client address.
    pub upgrade_limiter: Arc<UpgradeLimiter>,
    /// The server API's admin key (`None`: the API is off).
    pub admin_key: Option<Secret>,
    /// Set when the node starts shutting down: `/readyz` fails from then on.
    pub draining: Arc<AtomicBool>,
    /// When the delivery loop last completed a read (ms since the epoch).
    pub delivery_beat: Arc<AtomicU64>,
    /// Whether the delivery loop's last attempt succeeded (false while it reconnects).
    pub delivery_reading: Arc<AtomicBool>,
    /// Set while the node cannot reach Redis (see `backend_watch`): `hello` is refused and
    /// `/readyz` fails.
    pub degraded: Arc<AtomicBool>,
    /// Where media bytes are stored.
    pub media: MediaStore,
}

impl GatewayState {
    /// Whether the delivery loop has read recently enough to count as running.
    pub fn delivery_alive(&self, now_ms: u64) -> bool {
        self.delivery_reading.load(Ordering::Relaxed)
            && now_ms.saturating_sub(self.delivery_beat.load(Ordering::Relaxed)) < DELIVERY_STALL_MS
    }

    /// Whether the node currently counts Redis as unreachable.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }
}
