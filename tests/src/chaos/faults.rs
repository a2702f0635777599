//! The faults the chaos suite injects, one at a time, into a running cluster.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::chaos::device::DeviceControls;
use crate::cluster::Cluster;

/// How long a stalled device stops reading (longer than the suite's slow-consumer bound).
pub const STALL: Duration = Duration::from_millis(2_500);

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// SIGKILL a gateway mid-stream, then start it again.
    KillGateway,
    /// SIGTERM a gateway (drain), then start it again.
    DrainGateway,
    /// SIGKILL a worker mid-turn, then start it again.
    KillWorker,
    /// A listening device stops reading for [`STALL`].
    StallDevice,
}

impl Fault {
    /// Every kind, in the order a run cycles through them.
    pub const ALL: [Fault; 4] = [
        Fault::KillGateway,
        Fault::KillWorker,
        Fault::StallDevice,
        Fault::DrainGateway,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Fault::KillGateway => "gateway kill -9",
            Fault::DrainGateway => "gateway drain",
            Fault::KillWorker => "worker kill -9",
            Fault::StallDevice => "slow consumer",
        }
    }
}

/// Injects `fault` on node or device number `pick` (taken modulo their count) and returns
/// once the cluster has what it needs to go on (the node restarted).
pub async fn inject(
    cluster: &mut Cluster,
    fault: Fault,
    pick: usize,
    listeners: &[Arc<DeviceControls>],
) {
    match fault {
        Fault::KillGateway => {
            let index = pick % cluster.gateway_count();
            cluster.kill_gateway(index);
            tokio::time::sleep(Duration::from_millis(300)).await;
            cluster.restart_gateway(index).await;
        }
        Fault::DrainGateway => {
            let index = pick % cluster.gateway_count();
            cluster.terminate_gateway(index);
            let deadline = Instant::now() + Duration::from_secs(10);
            while !cluster.gateway_exited(index) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            cluster.restart_gateway(index).await;
        }
        Fault::KillWorker => {
            let index = pick % cluster.worker_count();
            cluster.kill_worker(index);
            cluster.restart_worker(index);
        }
        Fault::StallDevice => {
            let Some(device) = listeners.get(pick % listeners.len().max(1)) else {
                return;
            };
            device.stall.store(true, Ordering::Relaxed);
            tokio::time::sleep(STALL).await;
            device.stall.store(false, Ordering::Relaxed);
        }
    }
}
