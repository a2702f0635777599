//! The partitions' leases as the test sees them in Redis: who holds one, which worker owns
//! a chat, and waiting until the workers share the partitions evenly.

use std::time::{Duration, Instant};

use iris_shared::partition::partition_of;

use super::Cluster;
use crate::cluster_spec::worker_node_id;

impl Cluster {
    /// The node id holding `partition`'s lease, if any (the key holds `<node>|<fence>`).
    pub fn lease_holder(&self, partition: u32) -> Option<String> {
        let lease = iris_shared::keys::lease(partition);
        let reply = self.redis_command(&["GET", &lease]).ok()?;
        let value = reply.text()?;
        Some(value.split('|').next().unwrap_or(value).to_owned())
    }

    /// Index of the worker named `node_id`.
    pub fn worker_index(&self, node_id: &str) -> Option<usize> {
        (0..self.workers.len()).find(|&index| worker_node_id(index) == node_id)
    }

    /// Index of the worker holding the lease of `account`'s chat `chat_id`; panics if its
    /// partition has no holder or the holder is none of the cluster's workers.
    pub fn chat_owner(&self, account: &str, chat_id: &str) -> usize {
        let partition = partition_of(account, chat_id, self.partitions);
        let owner = self
            .lease_holder(partition)
            .unwrap_or_else(|| panic!("partition {partition} has no lease holder"));
        self.worker_index(&owner)
            .unwrap_or_else(|| panic!("lease holder {owner:?} is not one of the test's workers"))
    }

    /// The holder of every partition's lease, in partition order.
    pub fn lease_holders(&self) -> Vec<Option<String>> {
        (0..self.partitions).map(|p| self.lease_holder(p)).collect()
    }

    /// Waits until every partition is leased and each worker holds an equal share (so no
    /// handover for balance happens during what the test does next).
    pub async fn wait_for_lease_balance(&self, timeout: Duration) {
        let workers = self.workers.len();
        let deadline = Instant::now() + timeout;
        loop {
            let holders = self.lease_holders();
            let share_of = |index: usize| {
                let node = worker_node_id(index);
                holders
                    .iter()
                    .filter(|h| h.as_deref() == Some(&node))
                    .count()
            };
            let fair = self.partitions as usize / workers.max(1);
            if holders.iter().all(Option::is_some) && (0..workers).all(|i| share_of(i) == fair) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "leases not balanced within {timeout:?}: {holders:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
