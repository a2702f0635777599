//! What the bench reads from the cluster's Redis itself: `INFO` (commands processed, each
//! command's calls, CPU) of every master for the cost columns and the per-shard figures, an account's outbox
//! seqs (the truth a reconnect or replay is checked against) and a partition's lease
//! holder (which worker owns a chat). It talks through the store's own [`Link`], so keyed
//! reads reach the right master of a Redis Cluster as the nodes' do.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use iris_shared::keys::{self, AccountKeys};
use iris_shared::partition::Partition;
use iris_shared::redis_conn::{Link, RedisEndpoint};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::streams::StreamRangeReply;
use redis::Value;

use crate::cluster_nodes;
use crate::command_mix::CommandMix;
use crate::shard_costs::ShardCounters;

/// How long one of the probe's commands may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Counters from `INFO`, one entry per master.
#[derive(Debug, Clone, Default)]
pub struct RedisCounters {
    /// Whether Redis is a Cluster (whose shards the report lists).
    pub cluster: bool,
    pub shards: Vec<ShardCounters>,
    /// Calls of each command, all masters together.
    pub by_command: CommandMix,
}

impl RedisCounters {
    /// Commands processed by all masters together.
    pub fn commands(&self) -> f64 {
        self.shards.iter().map(|s| s.commands).sum()
    }

    /// CPU seconds of all masters together.
    pub fn cpu_seconds(&self) -> f64 {
        self.shards.iter().map(|s| s.cpu_seconds).sum()
    }
}

/// The connection to the cluster's Redis.
#[derive(Clone)]
pub struct RedisProbe {
    link: Link,
}

impl RedisProbe {
    /// Connects to `url`: `redis://`, `redis+sentinel://` or `redis+cluster://` seeds.
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = iris_shared::redact::url(url);
        let endpoint = RedisEndpoint::parse(url).with_context(|| format!("Redis URL {shown}"))?;
        let link = endpoint
            .connect(Some(PROBE_TIMEOUT))
            .await
            .with_context(|| format!("connecting to {shown}"))?;
        Ok(Self { link })
    }

    /// Each master's `total_commands_processed` and `used_cpu_sys + used_cpu_user`.
    pub async fn counters(&self) -> Result<RedisCounters> {
        match &self.link {
            Link::Server(conn) => {
                let info: String = redis::cmd("INFO")
                    .arg("everything")
                    .query_async(&mut conn.clone())
                    .await?;
                Ok(RedisCounters {
                    cluster: false,
                    shards: vec![shard_counters("redis", 0, &info)],
                    by_command: CommandMix::parse(&info),
                })
            }
            Link::Cluster(conn) => cluster_counters(conn.clone()).await,
        }
    }

    /// Every seq in `account`'s outbox (entry ids are `<seq>-0`), ascending.
    pub async fn outbox_seqs(&self, account: &str) -> Result<Vec<u64>> {
        let key = AccountKeys::new(account).outbox();
        let reply: StreamRangeReply = redis::cmd("XRANGE")
            .arg(&key)
            .arg("-")
            .arg("+")
            .query_async(&mut self.link.clone())
            .await?;
        Ok(reply
            .ids
            .iter()
            .filter_map(|entry| entry.id.split('-').next()?.parse().ok())
            .collect())
    }

    /// The number of frames in `account`'s outbox.
    pub async fn outbox_len(&self, account: &str) -> Result<u64> {
        let key = AccountKeys::new(account).outbox();
        Ok(redis::cmd("XLEN")
            .arg(&key)
            .query_async(&mut self.link.clone())
            .await?)
    }

    /// The node id holding `partition`'s lease (the key holds `<node>|<fence>`).
    pub async fn lease_holder(&self, partition: Partition) -> Result<Option<String>> {
        let value: Option<String> = redis::cmd("GET")
            .arg(keys::lease(partition))
            .query_async(&mut self.link.clone())
            .await?;
        Ok(value.map(|v| v.split('|').next().unwrap_or(&v).to_owned()))
    }
}

/// `INFO` of every master (the client's view of the slot map names them), labelled with
/// the slots `CLUSTER NODES` says each serves.
async fn cluster_counters(mut conn: ClusterConnection) -> Result<RedisCounters> {
    let mut info = redis::cmd("INFO");
    info.arg("everything");
    let every_master = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
    let replies = match conn.route_command(info, every_master).await? {
        Value::Map(replies) => replies,
        other => bail!("INFO on every master answered {other:?}"),
    };
    let mut infos = Vec::new();
    for (node, reply) in replies {
        let node: String = redis::from_redis_value(node)?;
        let text: String =
            redis::from_redis_value(reply).with_context(|| format!("INFO of {node}"))?;
        infos.push((node, text));
    }
    let Some((asked, _)) = infos.first() else {
        bail!("the Redis Cluster has no master");
    };
    let (host, port) = asked
        .rsplit_once(':')
        .and_then(|(host, port)| Some((host.to_owned(), port.parse().ok()?)))
        .with_context(|| format!("master address {asked}"))?;
    let at_first = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port });
    let nodes: String = redis::from_redis_value(
        conn.route_command(redis::cmd("CLUSTER").arg("NODES").clone(), at_first)
            .await?,
    )?;
    let masters = cluster_nodes::masters(&nodes, asked);
    let mut shards: Vec<(Option<u16>, ShardCounters)> = infos
        .iter()
        .map(|(node, text)| {
            let master = masters.iter().find(|m| m.addr == *node);
            let slots = master.map_or(0, cluster_nodes::Master::slot_count);
            let first = master.and_then(cluster_nodes::Master::first_slot);
            (first, shard_counters(node, slots, text))
        })
        .collect();
    shards.sort_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.node.cmp(&y.node)));
    let mut by_command = CommandMix::default();
    for (_, text) in &infos {
        by_command.add(&CommandMix::parse(text));
    }
    Ok(RedisCounters {
        cluster: true,
        shards: shards.into_iter().map(|(_, shard)| shard).collect(),
        by_command,
    })
}

/// The counters of one master's `INFO` text.
fn shard_counters(node: &str, slots: u32, info: &str) -> ShardCounters {
    ShardCounters {
        node: node.to_owned(),
        slots,
        commands: info_field(info, "total_commands_processed"),
        cpu_seconds: info_field(info, "used_cpu_sys") + info_field(info, "used_cpu_user"),
    }
}

/// A numeric `name:value` field of `INFO` text (0 when absent).
fn info_field(info: &str, name: &str) -> f64 {
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_from_info_text() {
        let info = "# Stats\r\ntotal_commands_processed:1234\r\n\
                    # CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n\
                    used_cpu_sys_children:9.0\r\n";
        let shard = shard_counters("h:1", 16384, info);
        assert_eq!(shard.commands, 1234.0);
        assert_eq!(shard.cpu_seconds, 3.75);
        assert_eq!(info_field(info, "missing"), 0.0);
        let counters = RedisCounters {
            cluster: true,
            shards: vec![shard.clone(), shard],
            by_command: CommandMix::default(),
        };
        assert_eq!(counters.commands(), 2468.0);
        assert_eq!(counters.cpu_seconds(), 7.5);
    }
}
