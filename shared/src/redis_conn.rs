//! Redis connections: a pool for ordinary commands and dedicated connections for
//! blocking reads, to one Redis or to the master a set of Sentinels names.
//!
//! A blocking `XREAD`/`XREADGROUP` must never share a multiplexed connection with other
//! commands (they would queue behind the block), and must not be cut off by the client's
//! default response timeout, so each blocking loop owns one connection of its own.
//!
//! With Sentinel (`redis+sentinel://host:port,host:port/<master name>`) every new
//! connection asks the Sentinels for the current master (which the client checks with
//! `ROLE`). A pooled connection is handed out only while its server is still the one the
//! Sentinels name (asked at most every [`MASTER_RECHECK`]), and one that gets a
//! `READONLY` or `NOREPLICAS` answer is dropped instead of going back into the pool;
//! blocking loops ask [`RedisEndpoint::still_master`] after every read. So after a
//! failover every node follows the new master as soon as the Sentinels announce it, even
//! while the old master still accepts connections.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::AsyncConnectionConfig;
use tokio::sync::Mutex;

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
/// URL scheme that names a Sentinel-managed master.
pub const SENTINEL_SCHEME: &str = "redis+sentinel://";

/// Where the cluster's Redis is: one server, or the master a set of Sentinels names.
/// Cheap to clone; clones share the Sentinel client.
#[derive(Clone)]
pub struct RedisEndpoint {
    target: Target,
    url: Arc<str>,
}

#[derive(Clone)]
enum Target {
    Direct(redis::Client),
    Sentinel(Arc<SentinelState>),
}

/// The Sentinel client and its last answer.
struct SentinelState {
    client: Mutex<SentinelClient>,
    /// When the master was last resolved, and its address.
    named: std::sync::Mutex<Option<(Instant, String)>>,
}

impl std::fmt::Debug for RedisEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEndpoint")
            .field("url", &self.url)
            .finish()
    }
}

impl RedisEndpoint {
    /// Parses `IRIS_REDIS_URL`: `redis://…` (one server) or
    /// `redis+sentinel://host1:26379,host2:26379/<master name>`.
    pub fn parse(url: &str) -> Result<Self, RedisConnError> {
        let target = match url.strip_prefix(SENTINEL_SCHEME) {
            Some(rest) => {
                let (hosts, master) = rest.split_once('/').ok_or_else(|| {
                    RedisConnError::Config(format!("{url}: no master name after the hosts"))
                })?;
                let master = master.trim_end_matches('/');
                let sentinels: Vec<String> = hosts
                    .split(',')
                    .filter(|h| !h.is_empty())
                    .map(|h| format!("redis://{h}"))
                    .collect();
                if sentinels.is_empty() || master.is_empty() {
                    return Err(RedisConnError::Config(format!(
                        "{url}: expected {SENTINEL_SCHEME}host:port[,host:port…]/<master name>"
                    )));
                }
                let client = SentinelClient::build(
                    sentinels,
                    master.to_owned(),
                    None,
                    SentinelServerType::Master,
                )?;
                Target::Sentinel(Arc::new(SentinelState {
                    client: Mutex::new(client),
                    named: std::sync::Mutex::new(None),
                }))
            }
            None => Target::Direct(redis::Client::open(url)?),
        };
        Ok(Self {
            target,
            url: url.into(),
        })
    }

    /// The URL it was parsed from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the master is found through Sentinels (and may move).
    pub fn is_sentinel(&self) -> bool {
        matches!(self.target, Target::Sentinel(_))
    }

    /// A client for the server to talk to now (with Sentinel: the current master), and
    /// that server's address.
    async fn client(&self) -> redis::RedisResult<(redis::Client, String)> {
        match &self.target {
            Target::Direct(client) => {
                let addr = client.get_connection_info().addr().to_string();
                Ok((client.clone(), addr))
            }
            Target::Sentinel(sentinel) => {
                let client = sentinel.client.lock().await.async_get_client().await?;
                let addr = client.get_connection_info().addr().to_string();
                if let Ok(mut named) = sentinel.named.lock() {
                    *named = Some((Instant::now(), addr.clone()));
                }
                Ok((client, addr))
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
        let cached = sentinel.named.lock().ok().and_then(|named| named.clone());
        match cached {
            Some((at, named)) if at.elapsed() < MASTER_RECHECK => named == addr,
            _ => matches!(Box::pin(self.client()).await, Ok((_, named)) if named == addr),
        }
    }

    /// A pub/sub connection to the current master.
    pub async fn pubsub(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let (client, _) = Box::pin(self.client()).await?;
        client.get_async_pubsub().await
    }

    /// A new connection to the current master with `response_timeout`.
    pub async fn connect(
        &self,
        response_timeout: Option<Duration>,
    ) -> redis::RedisResult<MultiplexedConnection> {
        Ok(self.connect_to_master(response_timeout).await?.0)
    }

    /// A new connection to the current master, and the master's address.
    async fn connect_to_master(
        &self,
        response_timeout: Option<Duration>,
    ) -> redis::RedisResult<(MultiplexedConnection, String)> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(response_timeout);
        let connect = async {
            let (client, addr) = Box::pin(self.client()).await?;
            let conn = client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            Ok((conn, addr))
        };
        tokio::time::timeout(CONNECT_TIMEOUT * 2, connect)
            .await
            .map_err(|_| {
                redis::RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connecting to Redis timed out",
                ))
            })?
    }
}

/// A pooled connection's server plus whether it turned out to be a demoted master.
pub struct TrackedConnection {
    conn: MultiplexedConnection,
    /// The server's address.
    addr: String,
    demoted: bool,
}

/// Creates and re-checks pooled connections.
pub struct Manager {
    endpoint: RedisEndpoint,
}

impl managed::Manager for Manager {
    type Type = TrackedConnection;
    type Error = redis::RedisError;

    async fn create(&self) -> Result<TrackedConnection, redis::RedisError> {
        // Boxed: the Sentinel lookup is a deep future, and every `get()` embeds this one.
        let connect = self.endpoint.connect_to_master(Some(COMMAND_TIMEOUT));
        let (conn, addr) = Box::pin(connect).await?;
        Ok(TrackedConnection {
            conn,
            addr,
            demoted: false,
        })
    }

    async fn recycle(
        &self,
        tracked: &mut TrackedConnection,
        _: &Metrics,
    ) -> RecycleResult<redis::RedisError> {
        if tracked.demoted {
            return Err(RecycleError::message("server refused writes"));
        }
        if self.endpoint.is_sentinel() {
            if !Box::pin(self.endpoint.still_master(&tracked.addr)).await {
                return Err(RecycleError::message("server is no longer the master"));
            }
        } else {
            redis::cmd("PING")
                .query_async::<()>(&mut tracked.conn)
                .await?;
        }
        Ok(())
    }
}

/// A connection taken from the [`Pool`]; goes back when dropped (unless it was demoted).
pub struct Connection {
    object: managed::Object<Manager>,
}

impl From<managed::Object<Manager>> for Connection {
    fn from(object: managed::Object<Manager>) -> Self {
        Self { object }
    }
}

impl Deref for Connection {
    type Target = MultiplexedConnection;

    fn deref(&self) -> &MultiplexedConnection {
        &self.object.conn
    }
}

impl DerefMut for Connection {
    fn deref_mut(&mut self) -> &mut MultiplexedConnection {
        &mut self.object.conn
    }
}

/// Whether `result` says the server must not take writes: a read-only replica, or a
/// master cut off from its replicas (`min-replicas-to-write`), as an old master is after
/// a failover.
fn is_readonly<T>(result: &redis::RedisResult<T>) -> bool {
    matches!(result, Err(err) if matches!(err.code(), Some("READONLY" | "NOREPLICAS")))
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        Box::pin(async move {
            let result = self.object.conn.req_packed_command(cmd).await;
            self.object.demoted |= is_readonly(&result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        Box::pin(async move {
            let result = self
                .object
                .conn
                .req_packed_commands(cmd, offset, count)
                .await;
            self.object.demoted |= is_readonly(&result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.object.conn.get_db()
    }
}

/// A connection pool for ordinary (non-blocking) commands.
pub type Pool = managed::Pool<Manager, Connection>;
/// Error of taking a connection from the [`Pool`].
pub type PoolError = managed::PoolError<redis::RedisError>;

/// A connection pool for ordinary (non-blocking) commands on `endpoint`.
pub fn pool(endpoint: &RedisEndpoint) -> Result<Pool, RedisConnError> {
    Pool::builder(Manager {
        endpoint: endpoint.clone(),
    })
    .max_size(POOL_SIZE)
    .wait_timeout(Some(COMMAND_TIMEOUT))
    .create_timeout(Some(CONNECT_TIMEOUT * 2))
    .recycle_timeout(Some(CONNECT_TIMEOUT))
    .runtime(deadpool::Runtime::Tokio1)
    .build()
    .map_err(|err| RedisConnError::Config(err.to_string()))
}

/// A blocking loop's own connection and the server it goes to.
pub struct BlockingConnection {
    /// The connection.
    pub conn: MultiplexedConnection,
    /// Its server's address.
    pub addr: String,
}

/// Fails (so a blocking loop reconnects) if the server at `addr` is no longer the master.
pub async fn ensure_master(endpoint: &RedisEndpoint, addr: &str) -> redis::RedisResult<()> {
    if endpoint.still_master(addr).await {
        return Ok(());
    }
    Err(redis::RedisError::from(std::io::Error::other(format!(
        "{addr} is no longer the master"
    ))))
}

/// A connection of its own for one blocking-read loop: no response timeout, because the
/// loop's `BLOCK` argument bounds each call (and the loop bounds it again on its side).
pub async fn blocking_connection(
    endpoint: &RedisEndpoint,
) -> Result<BlockingConnection, RedisConnError> {
    let (conn, addr) = endpoint.connect_to_master(None).await?;
    Ok(BlockingConnection { conn, addr })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_urls_name_hosts_and_a_master() {
        let endpoint =
            RedisEndpoint::parse("redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster")
                .unwrap();
        assert!(endpoint.is_sentinel());
        assert!(RedisEndpoint::parse("redis+sentinel://127.0.0.1:26379").is_err());
        assert!(RedisEndpoint::parse("redis+sentinel:///mymaster").is_err());
        assert!(!RedisEndpoint::parse("redis://127.0.0.1:6379")
            .unwrap()
            .is_sentinel());
    }
}
