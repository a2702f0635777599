//! The faults the chaos suite injects, one at a time, into a running cluster.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::chaos::device::DeviceControls;
use crate::cluster::Cluster;

/// How long a stalled device stops reading (longer than the suite's slow-consumer bound).
pub const STALL: Duration = Duration::from_millis(2_500);

/// How long a paused worker stays stopped (longer than the default 2 s lease).
pub const PAUSE: Duration = Duration::from_millis(3_000);

/// Slots one reshard moves.
const RESHARD_SLOTS: u16 = 1_000;
/// How long Redis stays down.
pub const REDIS_DOWN: Duration = Duration::from_millis(1_000);

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// SIGKILL a gateway mid-stream, then start it again.
    KillGateway,
    /// SIGTERM a gateway (drain), then start it again.
    DrainGateway,
    /// SIGKILL a worker mid-turn, then start it again.
    KillWorker,
    /// SIGTERM a worker (drain: it finishes or hands back its turns), then start it again.
    DrainWorker,
    /// SIGSTOP a worker past its lease lifetime, then SIGCONT it: it must be fenced off.
    PauseWorker,
    /// A listening device stops reading for [`STALL`].
    StallDevice,
    /// SIGKILL Redis (AOF, fsync always) and start it again on its data.
    RestartRedis,
    /// `SENTINEL FAILOVER`: the replica becomes master (Sentinel-managed Redis only).
    SentinelFailover,
    /// SIGKILL a Redis Cluster master: its replica is promoted, and the old master is
    /// started again on its data and rejoins as a replica.
    KillClusterMaster,
    /// Move slots from one Redis Cluster master to another (`redis-cli --cluster
    /// reshard`) while traffic flows.
    ReshardCluster,
}

impl Fault {
    /// Every kind, in the order a run cycles through them.
    pub const ALL: [Fault; 7] = [
        Fault::KillGateway,
        Fault::KillWorker,
        Fault::StallDevice,
        Fault::DrainGateway,
        Fault::RestartRedis,
        Fault::PauseWorker,
        Fault::DrainWorker,
    ];

    /// The faults of a run on a Sentinel-managed Redis (which cannot be restarted alone).
    pub const WITH_SENTINEL: [Fault; 6] = [
        Fault::KillGateway,
        Fault::SentinelFailover,
        Fault::KillWorker,
        Fault::StallDevice,
        Fault::DrainGateway,
        Fault::PauseWorker,
    ];

    /// The faults of a run on a Redis Cluster.
    pub const WITH_CLUSTER: [Fault; 6] = [
        Fault::KillClusterMaster,
        Fault::KillGateway,
        Fault::ReshardCluster,
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
            Fault::DrainWorker => "worker drain",
            Fault::PauseWorker => "worker paused",
            Fault::StallDevice => "slow consumer",
            Fault::RestartRedis => "redis kill -9 + restart",
            Fault::SentinelFailover => "sentinel failover",
            Fault::KillClusterMaster => "cluster master kill -9",
            Fault::ReshardCluster => "cluster reshard",
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
        Fault::DrainWorker => {
            let index = pick % cluster.worker_count();
            cluster.terminate_worker(index);
            let deadline = Instant::now() + Duration::from_secs(20);
            while !cluster.worker_exited(index) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            cluster.restart_worker(index);
        }
        Fault::PauseWorker => {
            let index = pick % cluster.worker_count();
            cluster.pause_worker(index);
            tokio::time::sleep(PAUSE).await;
            cluster.resume_worker(index);
        }
        Fault::RestartRedis => {
            cluster.kill_redis();
            tokio::time::sleep(REDIS_DOWN).await;
            cluster.restart_redis();
        }
        Fault::SentinelFailover => {
            let group = cluster
                .sentinels()
                .expect("a Sentinel failover needs a Sentinel-managed Redis");
            // A failover needs a replica in sync: the last one's old master may still be
            // catching up with its new master.
            let deadline = Instant::now() + Duration::from_secs(20);
            while !group.replica_in_sync() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            group.failover();
        }
        Fault::KillClusterMaster => {
            let redis = cluster
                .redis_cluster_mut()
                .expect("a cluster master kill needs a Redis Cluster");
            // The harness waits by polling the nodes: off the runtime's worker threads.
            tokio::task::block_in_place(|| {
                redis.wait_for_ok();
                let masters = redis.masters();
                let killed = redis.kill_master(masters[pick % masters.len()]);
                redis.wait_failover_of(killed);
                redis.restart(killed);
                redis.wait_for_ok();
            });
        }
        Fault::ReshardCluster => {
            let redis = cluster
                .redis_cluster()
                .expect("a reshard needs a Redis Cluster");
            tokio::task::block_in_place(|| {
                redis.wait_for_ok();
                let masters = redis.masters();
                let from = masters[pick % masters.len()];
                let to = masters[(pick + 1) % masters.len()];
                redis.reshard_blocking(from, to, RESHARD_SLOTS);
            });
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
