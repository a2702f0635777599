//! A Redis Cluster as the store: `redis+cluster://[user:password@]host:port[,host:port…]`
//! (seed nodes; `rediss+cluster://` for TLS). The client learns the slot map from any seed,
//! routes each command to its slot's master and follows MOVED, ASK, failovers and new
//! masters.
//!
//! Ordinary commands of a process share one cluster connection (it multiplexes every
//! node's link); each blocking loop gets a cluster connection of its own, so that its
//! `BLOCK` never holds other commands back. Pub/sub messages reach every node of a Cluster,
//! so a subscriber listens on any seed that answers.

use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::io::tcp::TcpSettings;
use redis::IntoConnectionInfo;
use tokio::sync::OnceCell;

use super::{timed_out, RedisConnError, COMMAND_TIMEOUT, CONNECT_TIMEOUT};

/// URL scheme that names a Redis Cluster by its seed nodes.
pub const CLUSTER_SCHEME: &str = "redis+cluster://";
/// The same over TLS.
pub const CLUSTER_TLS_SCHEME: &str = "rediss+cluster://";
/// Longest a command may take including its retries while a failover or reshard is under
/// way (a master's failure is detected and its replica promoted in a few seconds).
pub const CLUSTER_OVERALL_TIMEOUT: Duration = Duration::from_secs(12);

/// The seed nodes and the process's shared connection.
pub(super) struct ClusterState {
    seeds: Vec<String>,
    shared: OnceCell<ClusterConnection>,
}

/// Parses the part of a cluster URL after its scheme: `[user:password@]h:p[,h:p…][/]`.
pub(super) fn parse(url: &str) -> Option<Result<ClusterState, RedisConnError>> {
    let (rest, node_scheme) = match url.strip_prefix(CLUSTER_TLS_SCHEME) {
        Some(rest) => (rest, "rediss://"),
        None => (url.strip_prefix(CLUSTER_SCHEME)?, "redis://"),
    };
    let rest = rest.trim_end_matches('/');
    let (credentials, hosts) = match rest.rsplit_once('@') {
        Some((credentials, hosts)) => (format!("{credentials}@"), hosts),
        None => (String::new(), rest),
    };
    let seeds: Vec<String> = hosts
        .split(',')
        .filter(|host| !host.is_empty())
        .map(|host| format!("{node_scheme}{credentials}{host}"))
        .collect();
    if seeds.is_empty() || hosts.contains('/') {
        return Some(Err(RedisConnError::Config(format!(
            "expected {CLUSTER_SCHEME}[user:password@]host:port[,host:port…] \
             (or {CLUSTER_TLS_SCHEME}…)"
        ))));
    }
    for seed in &seeds {
        if let Err(err) = seed.as_str().into_connection_info() {
            return Some(Err(RedisConnError::Config(format!(
                "cluster seed {}: {err}",
                host_of(seed)
            ))));
        }
    }
    Some(Ok(ClusterState {
        seeds,
        shared: OnceCell::new(),
    }))
}

/// A seed URL without its credentials, for messages.
fn host_of(seed: &str) -> &str {
    let rest = seed.split_once("://").map_or(seed, |(_, rest)| rest);
    rest.rsplit_once('@').map_or(rest, |(_, host)| host)
}

impl ClusterState {
    fn client(&self, response_timeout: Duration) -> redis::RedisResult<ClusterClient> {
        ClusterClientBuilder::new(self.seeds.clone())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(response_timeout)
            .overall_response_timeout(Some(CLUSTER_OVERALL_TIMEOUT.max(response_timeout)))
            // Without TCP_NODELAY a command written while the previous one is
            // unacknowledged waits for the server's delayed ACK (40 ms on Linux).
            .tcp_settings(TcpSettings::default().set_nodelay(true))
            .build()
    }

    /// A new cluster connection whose commands each wait up to `response_timeout`.
    pub(super) async fn connect(
        &self,
        response_timeout: Duration,
    ) -> redis::RedisResult<ClusterConnection> {
        let client = self.client(response_timeout)?;
        tokio::time::timeout(CONNECT_TIMEOUT * 2, client.get_async_connection())
            .await
            .map_err(|_| timed_out("connecting to the Redis Cluster"))?
    }

    /// The process's shared connection for ordinary commands (made on first use).
    pub(super) async fn shared(&self) -> redis::RedisResult<ClusterConnection> {
        self.shared
            .get_or_try_init(|| self.connect(COMMAND_TIMEOUT))
            .await
            .cloned()
    }

    /// A pub/sub connection to the first seed that answers, and its address.
    pub(super) async fn pubsub(&self) -> redis::RedisResult<(redis::aio::PubSub, String)> {
        let mut last_err = None;
        for seed in &self.seeds {
            let connect = async {
                let client = redis::Client::open(seed.as_str())?;
                client.get_async_pubsub().await
            };
            match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
                Ok(Ok(pubsub)) => return Ok((pubsub, host_of(seed).to_owned())),
                Ok(Err(err)) => last_err = Some(err),
                Err(_) => last_err = Some(timed_out("connecting to a Redis Cluster seed")),
            }
        }
        Err(last_err.unwrap_or_else(|| timed_out("connecting to a Redis Cluster seed")))
    }

    /// The seeds' addresses (no credentials), for messages.
    pub(super) fn describe(&self) -> String {
        let hosts: Vec<&str> = self.seeds.iter().map(|seed| host_of(seed)).collect();
        format!("Redis Cluster {}", hosts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_urls_list_seeds_with_shared_credentials() {
        let state = parse("redis+cluster://u:p@10.0.0.1:7000,10.0.0.2:7001/")
            .unwrap()
            .unwrap();
        assert_eq!(
            state.seeds,
            vec!["redis://u:p@10.0.0.1:7000", "redis://u:p@10.0.0.2:7001"]
        );
        assert_eq!(
            state.describe(),
            "Redis Cluster 10.0.0.1:7000,10.0.0.2:7001"
        );
        let tls = parse("rediss+cluster://h:7000").unwrap().unwrap();
        assert_eq!(tls.seeds, vec!["rediss://h:7000"]);
        assert!(parse("redis+cluster://").unwrap().is_err());
        assert!(parse("redis+cluster://h:1/0").unwrap().is_err());
        assert!(parse("redis://h:1").is_none());
    }
}
