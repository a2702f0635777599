//! What a stretch of load cost the cluster: scrapes taken before and after it (gateway
//! resident memory and CPU, worker CPU, Redis commands (in all and by command) and CPU of
//! every master, the gateways' delivery latency histogram, the workers' inbound lag
//! histogram) and their differences.

use std::time::Instant;

use crate::cluster::Cluster;
use crate::command_mix::CommandMix;
use crate::metrics_scrape::{add_buckets, bucket_delta, bucket_quantile, MetricsPage};
use crate::redis_probe::{RedisCounters, RedisProbe};
use crate::shard_costs::ShardWindow;

/// The gateways' histogram of worker emit → socket write.
const DELIVERY_LATENCY: &str = "iris_gateway_delivery_latency_seconds";
/// The workers' histogram of gateway receipt → worker read of a request.
const INBOUND_LAG: &str = "iris_worker_inbound_lag_seconds";

/// The cluster's counters at one moment.
#[derive(Debug, Clone)]
pub struct CostSnapshot {
    at: Instant,
    gateway_rss_bytes: f64,
    gateway_cpu_s: f64,
    worker_cpu_s: f64,
    redis: Option<RedisCounters>,
    delivery_buckets: Vec<(f64, f64)>,
    inbound_buckets: Vec<(f64, f64)>,
}

impl CostSnapshot {
    /// Scrapes every node (a node that does not answer counts as 0) and Redis.
    pub async fn take(
        cluster: &Cluster,
        http: &reqwest::Client,
        redis: Option<&RedisProbe>,
    ) -> Self {
        let mut snapshot = Self {
            at: Instant::now(),
            gateway_rss_bytes: 0.0,
            gateway_cpu_s: 0.0,
            worker_cpu_s: 0.0,
            redis: None,
            delivery_buckets: Vec::new(),
            inbound_buckets: Vec::new(),
        };
        for gateway in &cluster.gateways {
            if let Ok(page) = MetricsPage::fetch(http, &gateway.http).await {
                snapshot.gateway_rss_bytes +=
                    page.value("process_resident_memory_bytes").unwrap_or(0.0);
                snapshot.gateway_cpu_s += page.value("process_cpu_seconds_total").unwrap_or(0.0);
                add_buckets(
                    &mut snapshot.delivery_buckets,
                    &page.buckets(DELIVERY_LATENCY),
                );
            }
        }
        for worker in &cluster.worker_metrics {
            if let Ok(page) = MetricsPage::fetch(http, worker).await {
                snapshot.worker_cpu_s += page.value("process_cpu_seconds_total").unwrap_or(0.0);
                add_buckets(&mut snapshot.inbound_buckets, &page.buckets(INBOUND_LAG));
            }
        }
        if let Some(redis) = redis {
            snapshot.redis = redis.counters().await.ok();
        }
        snapshot
    }
}

/// The difference between two snapshots.
#[derive(Debug, Clone)]
pub struct CostDelta {
    pub seconds: f64,
    pub gateway_rss_bytes: f64,
    pub gateway_cpu_s: f64,
    pub worker_cpu_s: f64,
    pub redis_commands: Option<f64>,
    pub redis_cpu_s: Option<f64>,
    /// Calls of each command, all masters together.
    pub redis_by_command: Option<CommandMix>,
    /// Each master's share, on a Redis Cluster.
    pub redis_shards: Option<ShardWindow>,
    delivery_buckets: Vec<(f64, f64)>,
    inbound_buckets: Vec<(f64, f64)>,
}

impl CostDelta {
    pub fn between(before: &CostSnapshot, after: &CostSnapshot) -> Self {
        let redis = before.redis.as_ref().zip(after.redis.as_ref());
        let seconds = after.at.duration_since(before.at).as_secs_f64().max(1e-6);
        Self {
            seconds,
            gateway_rss_bytes: after.gateway_rss_bytes - before.gateway_rss_bytes,
            gateway_cpu_s: after.gateway_cpu_s - before.gateway_cpu_s,
            worker_cpu_s: after.worker_cpu_s - before.worker_cpu_s,
            redis_commands: redis.map(|(b, a)| a.commands() - b.commands()),
            redis_cpu_s: redis.map(|(b, a)| a.cpu_seconds() - b.cpu_seconds()),
            redis_by_command: redis.map(|(b, a)| a.by_command.since(&b.by_command)),
            redis_shards: redis
                .filter(|(_, a)| a.cluster)
                .map(|(b, a)| ShardWindow::between(seconds, &b.shards, &a.shards)),
            delivery_buckets: bucket_delta(&before.delivery_buckets, &after.delivery_buckets),
            inbound_buckets: bucket_delta(&before.inbound_buckets, &after.inbound_buckets),
        }
    }

    /// Adds another window's costs (several short windows reported as one).
    pub fn add(&mut self, other: &CostDelta) {
        self.seconds += other.seconds;
        self.gateway_rss_bytes += other.gateway_rss_bytes;
        self.gateway_cpu_s += other.gateway_cpu_s;
        self.worker_cpu_s += other.worker_cpu_s;
        self.redis_commands = self
            .redis_commands
            .zip(other.redis_commands)
            .map(|(a, b)| a + b);
        self.redis_cpu_s = self.redis_cpu_s.zip(other.redis_cpu_s).map(|(a, b)| a + b);
        match (&mut self.redis_by_command, &other.redis_by_command) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (mine, _) => *mine = None,
        }
        match (&mut self.redis_shards, &other.redis_shards) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (mine, _) => *mine = None,
        }
        add_buckets(&mut self.delivery_buckets, &other.delivery_buckets);
        add_buckets(&mut self.inbound_buckets, &other.inbound_buckets);
    }

    /// CPU seconds of gateways and workers together.
    pub fn cpu_s(&self) -> f64 {
        self.gateway_cpu_s + self.worker_cpu_s
    }

    /// Redis commands per second over the window.
    pub fn redis_ops_per_s(&self) -> f64 {
        self.redis_commands.unwrap_or(0.0) / self.seconds
    }

    /// Redis commands per frame delivered (`None` without frames or without Redis).
    pub fn redis_cmds_per_frame(&self, frames: u64) -> Option<f64> {
        (frames > 0)
            .then_some(())
            .and(self.redis_commands)
            .map(|commands| commands / frames as f64)
    }

    /// Quantile `q` of the gateways' delivery latency in the window (ms).
    pub fn delivery_latency_ms(&self, q: f64) -> Option<f64> {
        bucket_quantile(&self.delivery_buckets, q).map(|s| s * 1000.0)
    }

    /// Quantile `q` of the workers' inbound lag in the window (ms): how long requests
    /// waited in the inbound streams.
    pub fn inbound_lag_ms(&self, q: f64) -> Option<f64> {
        bucket_quantile(&self.inbound_buckets, q).map(|s| s * 1000.0)
    }
}
