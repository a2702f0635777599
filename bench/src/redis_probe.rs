//! What the bench reads from the cluster's Redis itself: `INFO` (commands processed, CPU)
//! for the cost columns, an account's outbox seqs (the truth a reconnect or replay is
//! checked against) and a partition's lease holder (which worker owns a chat).

use anyhow::{Context, Result};
use iris_shared::keys::{self, AccountKeys};
use iris_shared::partition::Partition;
use redis::aio::MultiplexedConnection;
use redis::streams::StreamRangeReply;

/// Counters from `INFO`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedisCounters {
    pub commands: f64,
    pub cpu_seconds: f64,
}

/// One connection to the cluster's Redis.
#[derive(Clone)]
pub struct RedisProbe {
    connection: MultiplexedConnection,
}

impl RedisProbe {
    pub async fn connect(url: &str) -> Result<Self> {
        let client = redis::Client::open(url).with_context(|| format!("Redis URL {url}"))?;
        let connection = client
            .get_multiplexed_async_connection()
            .await
            .with_context(|| format!("connecting to {url}"))?;
        Ok(Self { connection })
    }

    /// `total_commands_processed` and `used_cpu_sys + used_cpu_user`.
    pub async fn counters(&self) -> Result<RedisCounters> {
        let mut connection = self.connection.clone();
        let info: String = redis::cmd("INFO")
            .arg("everything")
            .query_async(&mut connection)
            .await?;
        let field = |name: &str| -> f64 {
            info.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(0.0)
        };
        Ok(RedisCounters {
            commands: field("total_commands_processed"),
            cpu_seconds: field("used_cpu_sys") + field("used_cpu_user"),
        })
    }

    /// Every seq in `account`'s outbox (entry ids are `<seq>-0`), ascending.
    pub async fn outbox_seqs(&self, account: &str) -> Result<Vec<u64>> {
        let key = AccountKeys::new(account).outbox();
        let mut connection = self.connection.clone();
        let reply: StreamRangeReply = redis::cmd("XRANGE")
            .arg(&key)
            .arg("-")
            .arg("+")
            .query_async(&mut connection)
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
        let mut connection = self.connection.clone();
        Ok(redis::cmd("XLEN")
            .arg(&key)
            .query_async(&mut connection)
            .await?)
    }

    /// The node id holding `partition`'s lease (the key holds `<node>|<fence>`).
    pub async fn lease_holder(&self, partition: Partition) -> Result<Option<String>> {
        let mut connection = self.connection.clone();
        let value: Option<String> = redis::cmd("GET")
            .arg(keys::lease(partition))
            .query_async(&mut connection)
            .await?;
        Ok(value.map(|v| v.split('|').next().unwrap_or(&v).to_owned()))
    }
}
