//! What every scenario works with ([`Bench`]): the cluster, the server API, Redis, the live
//! stats and the run id naming its accounts; and how a scenario's costs and errors go into
//! its result. The scenarios and the device and publisher helpers they share all build on
//! it, so it imports none of them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cluster::{Cluster, SpawnSpec};
use crate::cost_window::{CostDelta, CostSnapshot};
use crate::live_stats::LiveStats;
use crate::options::Options;
use crate::redis_probe::RedisProbe;
use crate::report::ScenarioResult;
use crate::server_api::ServerApi;

/// How long a scenario waits for the last frames it expects after the load stops.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(15);

/// Everything a scenario works with.
pub struct Bench {
    pub options: Options,
    pub cluster: Cluster,
    pub api: ServerApi,
    pub redis: Option<RedisProbe>,
    pub stats: Arc<LiveStats>,
    /// Names this run's accounts apart from any other run's.
    pub run_id: String,
}

impl Bench {
    /// Prepares the cluster of `spec` (or the existing one) for a scenario.
    pub async fn prepare(options: &Options, spec: SpawnSpec) -> Result<Self> {
        let cluster = Cluster::prepare(options, spec).await?;
        let redis = match &cluster.redis_url {
            Some(url) => Some(RedisProbe::connect(url).await?),
            None => None,
        };
        let api = ServerApi::new(&cluster.admin_key)?;
        let run_id = format!(
            "{:x}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis()
        );
        Ok(Self {
            options: options.clone(),
            cluster,
            api,
            redis,
            stats: Arc::new(LiveStats::new()),
            run_id,
        })
    }

    /// The cluster's counters now.
    pub async fn snapshot(&self) -> CostSnapshot {
        CostSnapshot::take(&self.cluster, self.api.http(), self.redis.as_ref()).await
    }

    /// Redis, which this scenario cannot do without.
    pub fn redis(&self) -> Result<&RedisProbe> {
        self.redis
            .as_ref()
            .context("this scenario checks the outbox in Redis: pass --redis redis://... (or redis+cluster://...)")
    }

    /// Fills the cost columns of `result` from `cost` (`frames` delivered in it).
    pub fn fill_costs(result: &mut ScenarioResult, cost: &CostDelta, frames: u64) {
        result.cpu_s = cost.cpu_s();
        result.redis_ops_per_s = cost.redis_ops_per_s();
        result.redis_cmds_per_frame = cost.redis_cmds_per_frame(frames);
        result.put("window_s", cost.seconds.into());
        result.put("gateway_cpu_s", cost.gateway_cpu_s.into());
        result.put("worker_cpu_s", cost.worker_cpu_s.into());
        if let Some(redis_cpu) = cost.redis_cpu_s {
            result.put("redis_cpu_s", redis_cpu.into());
        }
        if let Some(by_command) = cost.redis_by_command.as_ref().filter(|_| frames > 0) {
            result.put("redis_commands", by_command.per_frame(frames));
        }
        if let Some(shards) = cost.redis_shards.as_ref().filter(|s| !s.shards.is_empty()) {
            result.put("redis_shard_count", shards.shards.len().into());
            if let Some(spread) = shards.commands_spread() {
                result.put("redis_spread_commands", spread.into());
            }
            if let Some(spread) = shards.cpu_spread() {
                result.put("redis_spread_cpu", spread.into());
            }
            result.redis_shards = Some(shards.clone());
        }
    }

    /// Adds the errors and their first reasons to `result`.
    pub fn fill_errors(&self, result: &mut ScenarioResult) {
        result.errors = self.stats.error_count();
        let reasons = self.stats.first_errors();
        if !reasons.is_empty() {
            result.put("first_errors", reasons.into());
        }
    }
}
