//! Redis connections: a pool for ordinary commands and dedicated connections for
//! blocking reads, to one Redis, to the master a set of Sentinels names, or to a Redis
//! Cluster (`redis+cluster://`, see [`cluster`]).
//!
//! A blocking `XREAD`/`XREADGROUP` must never share a multiplexed connection with other
//! commands (they would queue behind the block), and must not be cut off by the client's
//! default response timeout, so each blocking loop owns one connection of its own.
//!
//! Every command is bounded in time: pooled connections by [`COMMAND_TIMEOUT`], a
//! blocking loop's connection by its longest `BLOCK` plus [`BLOCKING_SLACK`], and every
//! question to the Sentinels by [`LOOKUP_TIMEOUT`] (their client is shared behind one lock,
//! so one slow lookup must not stall every caller behind it).
//!
//! With Sentinel (`redis+sentinel://host:port,host:port/<master name>`) every new
//! connection asks the Sentinels for the current master (which the client checks with
//! `ROLE`). A pooled connection is handed out only while its server is still the one the
//! Sentinels name (asked at most every [`MASTER_RECHECK`]); blocking loops race each read
//! against [`RedisEndpoint::until_not_master`] and reconnect when it fires.
//!
//! During a failover the promoted replica takes writes a little before the Sentinels
//! name it (they still list the old master until `+switch-master`, and the old master
//! still answers `ROLE` as master until they reconfigure it, seconds later). A server that
//! answers `READONLY` or `NOREPLICAS` is therefore remembered as refusing writes for
//! [`REFUSED_FOR`]: no new connection goes to it, [`RedisEndpoint::still_master`] says
//! "no" for it, and a pooled command it refused is sent again to the next master the
//! Sentinels name (it was not executed, so this is safe), for up to [`FOLLOW_TIMEOUT`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::io::tcp::TcpSettings;
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::AsyncConnectionConfig;
use tokio::sync::Mutex;

use crate::redact;

mod cluster;
mod link;
mod pool;
mod refusal;
pub mod slots;

pub use cluster::{CLUSTER_SCHEME, CLUSTER_TLS_SCHEME};
pub use link::Link;
pub use refusal::Refusal;

pub use pool::{pool, Connection, Manager, Pool, PoolError, TrackedConnection};

/// Error of connecting to Redis or of a command on it.
#[derive(Debug, thiserror::Error)]
pub enum RedisConnError {
    /// The URL or pool settings are invalid.
    #[error("invalid Redis configuration: {0}")]
    Config(String),
    /// Redis answered with an error or the connection failed.
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
    /// No pooled connection could be had.
    #[error("Redis pool: {0}")]
    Pool(#[from] PoolError),
}

/// How long an ordinary command may take before it counts as failed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// How long establishing a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest number of pooled connections per process.
pub const POOL_SIZE: usize = 32;
/// How stale the Sentinels' answer to "which server is master" may be.
pub const MASTER_RECHECK: Duration = Duration::from_millis(250);
/// How long one question to the Sentinels (including the `ROLE` check of the master they
/// name, and the wait for the shared Sentinel client) may take.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);
/// How much longer than its longest `BLOCK` any command on a blocking loop's connection
/// may take.
pub const BLOCKING_SLACK: Duration = Duration::from_secs(3);
/// How long a server that refused writes is not taken for the master (unless nothing else
/// is named by then, the Sentinels name the new master well within this).
pub const REFUSED_FOR: Duration = Duration::from_secs(5);
/// How long a pooled command a demoted master refused waits for the Sentinels to name
/// the new master before the refusal is returned.
pub const FOLLOW_TIMEOUT: Duration = Duration::from_secs(4);
/// Pause between asking the Sentinels again while they still name a refusing server.
const FOLLOW_RETRY: Duration = Duration::from_millis(100);
/// How often a blocking loop asks the Sentinels whether its server is still the master
/// (each question opens connections to them and to the master, so not every
/// [`MASTER_RECHECK`]).
pub const MASTER_WATCH: Duration = Duration::from_secs(1);
/// URL scheme that names a Sentinel-managed master.
pub const SENTINEL_SCHEME: &str = "redis+sentinel://";

/// Where the cluster's Redis is: one server, the master a set of Sentinels names, or a
/// Redis Cluster. Cheap to clone; clones share the Sentinel client or cluster connection.
#[derive(Clone)]
pub struct RedisEndpoint {
    target: Target,
    /// The URL, its password masked.
    url: Arc<str>,
}

#[derive(Clone)]
enum Target {
    Direct(Box<redis::Client>),
    Sentinel(Arc<SentinelState>),
    Cluster(Arc<cluster::ClusterState>),
}

/// The Sentinel client and its last answer.
struct SentinelState {
    client: Mutex<SentinelClient>,
    /// When the master was last resolved, and its address.
    named: std::sync::Mutex<Option<(Instant, String)>>,
    /// The last server that refused writes (`READONLY`, `NOREPLICAS`), and when.
    refused: std::sync::Mutex<Option<(Instant, String)>>,
}

impl SentinelState {
    /// Whether `addr` refused writes within the last [`REFUSED_FOR`].
    fn refused_lately(&self, addr: &str) -> bool {
        let refused = self.refused.lock().ok().and_then(|refused| refused.clone());
        matches!(refused, Some((at, refused)) if refused == addr && at.elapsed() < REFUSED_FOR)
    }
}

fn timed_out(what: &str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} timed out"),
    ))
}

impl std::fmt::Debug for RedisEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEndpoint")
            .field("url", &self.url)
            .finish()
    }
}

impl RedisEndpoint {
    /// Parses `IRIS_REDIS_URL`: `redis://…` (one server),
    /// `redis+sentinel://host1:26379,host2:26379/<master name>` or
    /// `redis+cluster://host1:6379,host2:6379` (seed nodes of a Redis Cluster).
    pub fn parse(url: &str) -> Result<Self, RedisConnError> {
        let shown = redact::url(url);
        if url.starts_with("rediss") {
            use_tls_crypto();
        }
        if let Some(state) = cluster::parse(url) {
            return Ok(Self {
                target: Target::Cluster(Arc::new(state?)),
                url: shown.into(),
            });
        }
        let target = match url.strip_prefix(SENTINEL_SCHEME) {
            Some(rest) => {
                let (hosts, master) = rest.split_once('/').ok_or_else(|| {
                    RedisConnError::Config(format!("{shown}: no master name after the hosts"))
                })?;
                let master = master.trim_end_matches('/');
                let sentinels: Vec<String> = hosts
                    .split(',')
                    .filter(|h| !h.is_empty())
                    .map(|h| format!("redis://{h}"))
                    .collect();
                if sentinels.is_empty() || master.is_empty() {
                    return Err(RedisConnError::Config(format!(
                        "{shown}: expected {SENTINEL_SCHEME}host:port[,host:port…]/<master name>"
                    )));
                }
                let client =
                    SentinelClient::build(sentinels, master, None, SentinelServerType::Master)?;
                Target::Sentinel(Arc::new(SentinelState {
                    client: Mutex::new(client),
                    named: std::sync::Mutex::new(None),
                    refused: std::sync::Mutex::new(None),
                }))
            }
            None => Target::Direct(Box::new(redis::Client::open(url)?)),
        };
        Ok(Self {
            target,
            url: shown.into(),
        })
    }

    /// The URL it was parsed from, its password masked (for messages).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the master is found through Sentinels (and may move).
    pub fn is_sentinel(&self) -> bool {
        matches!(self.target, Target::Sentinel(_))
    }

    /// Whether the store is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.target, Target::Cluster(_))
    }

    /// A client for the server to talk to now (with Sentinel: the current master), and
    /// that server's address.
    async fn client(&self) -> redis::RedisResult<(redis::Client, String)> {
        match &self.target {
            Target::Cluster(cluster) => Err(redis::RedisError::from(std::io::Error::other(
                format!("{} has no single server to connect to", cluster.describe()),
            ))),
            Target::Direct(client) => {
                let addr = client.get_connection_info().addr().to_string();
                Ok((client.as_ref().clone(), addr))
            }
            Target::Sentinel(sentinel) => {
                let lookup = async { sentinel.client.lock().await.async_get_client().await };
                let client = tokio::time::timeout(LOOKUP_TIMEOUT, lookup)
                    .await
                    .map_err(|_| timed_out("asking the Sentinels for the master"))??;
                let addr = client.get_connection_info().addr().to_string();
                if let Ok(mut named) = sentinel.named.lock() {
                    *named = Some((Instant::now(), addr.clone()));
                }
                if sentinel.refused_lately(&addr) {
                    return Err(redis::RedisError::from(std::io::Error::other(format!(
                        "the Sentinels still name {addr}, which refused writes; \
                         waiting for them to name the new master"
                    ))));
                }
                Ok((client, addr))
            }
        }
    }

    /// Whether some server refused writes within the last [`REFUSED_FOR`] (a failover
    /// may be under way).
    fn refusal_lately(&self) -> bool {
        let Target::Sentinel(sentinel) = &self.target else {
            return false;
        };
        let refused = sentinel
            .refused
            .lock()
            .ok()
            .and_then(|refused| refused.clone());
        matches!(refused, Some((at, _)) if at.elapsed() < REFUSED_FOR)
    }

    /// A new connection to the current master with `response_timeout`, and its address.
    /// While a server refused writes lately (a failover is under way), a failed attempt is
    /// tried again until the Sentinels name a master that takes writes, for up to
    /// [`FOLLOW_TIMEOUT`].
    pub(crate) async fn connect_following(
        &self,
        response_timeout: Option<Duration>,
    ) -> redis::RedisResult<(MultiplexedConnection, String)> {
        let deadline = Instant::now() + FOLLOW_TIMEOUT;
        loop {
            let result = Box::pin(self.connect_to_master(response_timeout)).await;
            if result.is_ok() || Instant::now() >= deadline || !self.refusal_lately() {
                return result;
            }
            tokio::time::sleep(FOLLOW_RETRY).await;
        }
    }

    /// Notes that the server at `addr` refused a write because it is not (or no longer) a
    /// writable master, if `result` says so. With Sentinel, that server is then not taken
    /// for the master for [`REFUSED_FOR`]. Returns whether it refused.
    pub fn note_refusal(&self, addr: &str, result: &impl Refusal) -> bool {
        if !result.refuses_writes() {
            return false;
        }
        if let Target::Sentinel(sentinel) = &self.target {
            if let Ok(mut refused) = sentinel.refused.lock() {
                if refused.as_ref().is_none_or(|(_, known)| known != addr) {
                    tracing::warn!(
                        addr,
                        "Redis server refused writes; following the Sentinels to the new master"
                    );
                }
                *refused = Some((Instant::now(), addr.to_owned()));
            }
        }
        true
    }

    /// Resolves once the server at `addr` is no longer the master (never for one server):
    /// at once (within [`MASTER_RECHECK`]) when it refused writes here, else when the
    /// Sentinels, asked every [`MASTER_WATCH`], name another. A blocking loop races its
    /// reads against this.
    pub async fn until_not_master(&self, addr: &str) {
        let Target::Sentinel(sentinel) = &self.target else {
            return std::future::pending().await;
        };
        let mut asked = Instant::now();
        loop {
            tokio::time::sleep(MASTER_RECHECK).await;
            if sentinel.refused_lately(addr) {
                return;
            }
            if asked.elapsed() >= MASTER_WATCH {
                asked = Instant::now();
                if !self.still_master(addr).await {
                    return;
                }
            }
        }
    }

    /// Whether the server at `addr` is still the one to talk to: always for one server;
    /// with Sentinel, whether the Sentinels still name it master (their answer is reused
    /// for [`MASTER_RECHECK`]). An unanswerable question counts as "no".
    pub async fn still_master(&self, addr: &str) -> bool {
        let Target::Sentinel(sentinel) = &self.target else {
            return true;
        };
        if sentinel.refused_lately(addr) {
            return false;
        }
        let cached = sentinel.named.lock().ok().and_then(|named| named.clone());
        match cached {
            Some((at, named)) if at.elapsed() < MASTER_RECHECK => named == addr,
            _ => matches!(Box::pin(self.client()).await, Ok((_, named)) if named == addr),
        }
    }

    /// A pub/sub connection to the current master, and the master's address; waits for
    /// the new master like [`Self::connect_following`].
    pub async fn pubsub(&self) -> redis::RedisResult<(redis::aio::PubSub, String)> {
        if let Target::Cluster(cluster) = &self.target {
            return cluster.pubsub().await;
        }
        let deadline = Instant::now() + FOLLOW_TIMEOUT;
        loop {
            let connect = async {
                let (client, addr) = Box::pin(self.client()).await?;
                Ok((client.get_async_pubsub().await?, addr))
            };
            let result = tokio::time::timeout(CONNECT_TIMEOUT + LOOKUP_TIMEOUT, connect)
                .await
                .map_err(|_| timed_out("connecting to Redis"))?;
            if result.is_ok() || Instant::now() >= deadline || !self.refusal_lately() {
                return result;
            }
            tokio::time::sleep(FOLLOW_RETRY).await;
        }
    }

    /// A new connection to the current master (on a Cluster: a new cluster connection)
    /// with `response_timeout`.
    pub async fn connect(&self, response_timeout: Option<Duration>) -> redis::RedisResult<Link> {
        Ok(self.connect_link(response_timeout).await?.0)
    }

    /// A new connection to the current master (on a Cluster: a new cluster connection,
    /// named by its seeds) with `response_timeout`, following a failover under way.
    pub(crate) async fn connect_link(
        &self,
        response_timeout: Option<Duration>,
    ) -> redis::RedisResult<(Link, String)> {
        if let Target::Cluster(cluster) = &self.target {
            let conn = cluster
                .connect(response_timeout.unwrap_or(COMMAND_TIMEOUT))
                .await?;
            return Ok((Link::Cluster(conn), cluster.describe()));
        }
        let (conn, addr) = self.connect_following(response_timeout).await?;
        Ok((Link::Server(conn), addr))
    }

    /// The shared connection for ordinary commands: on a Cluster one cluster connection per
    /// process; otherwise a new connection to the master.
    pub(crate) async fn pooled_link(&self) -> redis::RedisResult<(Link, String)> {
        if let Target::Cluster(cluster) = &self.target {
            return Ok((Link::Cluster(cluster.shared().await?), cluster.describe()));
        }
        let (conn, addr) = self.connect_following(Some(COMMAND_TIMEOUT)).await?;
        Ok((Link::Server(conn), addr))
    }

    /// A new connection to the current master, and the master's address.
    pub(crate) async fn connect_to_master(
        &self,
        response_timeout: Option<Duration>,
    ) -> redis::RedisResult<(MultiplexedConnection, String)> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(response_timeout);
        let connect = async {
            let (client, addr) = Box::pin(self.client()).await?;
            // Without TCP_NODELAY a command written while the previous one is unacknowledged
            // waits for the server's delayed ACK (40 ms on Linux): a turn's first frames did.
            let info = client.get_connection_info().clone();
            let tcp = TcpSettings::default().set_nodelay(true);
            let client = redis::Client::open(info.set_tcp_settings(tcp))?;
            let conn = client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            Ok((conn, addr))
        };
        tokio::time::timeout(CONNECT_TIMEOUT + LOOKUP_TIMEOUT, connect)
            .await
            .map_err(|_| timed_out("connecting to Redis"))?
    }
}

/// Selects the process's TLS crypto provider for `rediss://` connections: aws-lc-rs, the
/// one every TLS and signing user in the build shares (so a second provider compiled in
/// later cannot leave the choice ambiguous); the first call decides, later ones keep it.
fn use_tls_crypto() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

/// A blocking loop's own connection and the server it goes to (on a Cluster: the
/// cluster, named by its seeds).
pub struct BlockingConnection {
    /// The connection.
    pub conn: Link,
    /// Its server's address.
    pub addr: String,
}

impl BlockingConnection {
    /// The id of this connection at the server that serves `key` (the key its blocking
    /// reads name), with which another connection can cut such a read short
    /// ([`unblock_client`]).
    pub async fn client_id(&mut self, key: &str) -> redis::RedisResult<i64> {
        let reply = self
            .conn
            .send_beside(redis::cmd("CLIENT").arg("ID"), key)
            .await?;
        Ok(redis::from_redis_value(reply)?)
    }
}

/// Cuts the blocking read of connection `client_id` at the server that serves `key` short;
/// `false` if it was not blocked.
pub async fn unblock_client(
    conn: &mut Link,
    client_id: i64,
    key: &str,
) -> redis::RedisResult<bool> {
    let mut unblock = redis::cmd("CLIENT");
    unblock.arg("UNBLOCK").arg(client_id);
    let unblocked: i64 = redis::from_redis_value(conn.send_beside(&unblock, key).await?)?;
    Ok(unblocked == 1)
}

/// The error a blocking loop fails with when its server is no longer the master.
pub fn not_master(addr: &str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::other(format!(
        "{addr} is no longer the master"
    )))
}

/// Fails (so a blocking loop reconnects) if the server at `addr` is no longer the master.
pub async fn ensure_master(endpoint: &RedisEndpoint, addr: &str) -> redis::RedisResult<()> {
    if endpoint.still_master(addr).await {
        return Ok(());
    }
    Err(not_master(addr))
}

/// A connection of its own for one blocking-read loop whose longest `BLOCK` is
/// `longest_block`: every command on it (the reads and whatever else the loop sends)
/// fails after `longest_block` plus [`BLOCKING_SLACK`], so a server that stops answering
/// fails the loop instead of hanging it.
pub async fn blocking_connection(
    endpoint: &RedisEndpoint,
    longest_block: Duration,
) -> Result<BlockingConnection, RedisConnError> {
    let response_timeout = longest_block + BLOCKING_SLACK;
    let (conn, addr) = endpoint.connect_link(Some(response_timeout)).await?;
    tracing::info!(%addr, "blocking connection to the Redis master");
    Ok(BlockingConnection { conn, addr })
}

/// Whether the server answers: `PING`, as readiness probes ask it.
pub async fn ping<C: redis::aio::ConnectionLike + Send>(conn: &mut C) -> redis::RedisResult<()> {
    redis::cmd("PING").query_async::<String>(conn).await?;
    Ok(())
}

#[cfg(test)]
mod tests;
