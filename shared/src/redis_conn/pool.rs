//! The pool of connections for ordinary (non-blocking) commands, and its connections:
//! each knows its server, is handed out only while that server is still the master, and
//! sends a command a demoted master refused again to the new master. The pool also carries
//! the process's view of the live gateway nodes behind that Redis
//! ([`LiveGateways`], shared by all its connections).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use redis::aio::ConnectionLike;

use crate::presence::gateways::LiveGateways;

use super::{
    Link, RedisConnError, RedisEndpoint, Refusal, COMMAND_TIMEOUT, CONNECT_TIMEOUT, FOLLOW_TIMEOUT,
    LOOKUP_TIMEOUT, POOL_SIZE,
};

/// How long after its last use a pooled connection is handed out again without a PING.
const TRUSTED_AFTER_USE: std::time::Duration = std::time::Duration::from_secs(1);

/// A pooled connection's server plus whether it turned out to be a demoted master or to
/// have lost its link.
pub struct TrackedConnection {
    conn: Link,
    /// The server's address.
    addr: String,
    demoted: bool,
    /// A command failed on the link itself (dropped, timed out): the pool discards it.
    broken: bool,
    endpoint: RedisEndpoint,
    live_gateways: Arc<LiveGateways>,
}

impl TrackedConnection {
    /// Notes a failure of the link itself, so the connection is not handed out again.
    fn note_link<T>(&mut self, result: &redis::RedisResult<T>) {
        if let Err(err) = result {
            if err.is_io_error()
                || err.is_connection_dropped()
                || err.is_timeout()
                || err.is_unrecoverable_error()
            {
                self.broken = true;
            }
        }
    }

    /// Notes a refused write; with Sentinel, moves this connection to the master the
    /// Sentinels name next (waiting up to [`FOLLOW_TIMEOUT`] for them to name another
    /// server). Returns whether the command should be sent again (once: if the new master
    /// refuses it too, that answer stands).
    async fn follow_after(&mut self, result: &impl Refusal) -> bool {
        if !self.endpoint.note_refusal(&self.addr, result) {
            return false;
        }
        self.demoted = true;
        if !self.endpoint.is_sentinel() {
            return false;
        }
        let connect = self.endpoint.connect_following(Some(COMMAND_TIMEOUT));
        let Ok((conn, addr)) = Box::pin(connect).await else {
            return false;
        };
        tracing::info!(from = %self.addr, to = %addr, "pooled connection follows the new master");
        self.conn = Link::Server(conn);
        self.addr = addr;
        self.demoted = false;
        true
    }
}

/// Creates and re-checks pooled connections.
pub struct Manager {
    endpoint: RedisEndpoint,
    live_gateways: Arc<LiveGateways>,
}

impl managed::Manager for Manager {
    type Type = TrackedConnection;
    type Error = redis::RedisError;

    async fn create(&self) -> Result<TrackedConnection, redis::RedisError> {
        // Boxed: the Sentinel lookup is a deep future, and every `get()` embeds this one.
        let (conn, addr) = Box::pin(self.endpoint.pooled_link()).await?;
        Ok(TrackedConnection {
            conn,
            addr,
            demoted: false,
            broken: false,
            endpoint: self.endpoint.clone(),
            live_gateways: self.live_gateways.clone(),
        })
    }

    async fn recycle(
        &self,
        tracked: &mut TrackedConnection,
        metrics: &Metrics,
    ) -> RecycleResult<redis::RedisError> {
        if tracked.demoted {
            return Err(RecycleError::message("server refused writes"));
        }
        if tracked.broken {
            return Err(RecycleError::message("the link to the server failed"));
        }
        if self.endpoint.is_cluster() {
            // The cluster connection follows the slot map and reconnects by itself.
        } else if self.endpoint.is_sentinel() {
            if !Box::pin(self.endpoint.still_master(&tracked.addr)).await {
                return Err(RecycleError::message("server is no longer the master"));
            }
        } else if metrics.last_used() >= TRUSTED_AFTER_USE {
            // Only a connection that sat idle is checked: under load a PING per checkout
            // would be one more round trip per frame (a connection that broke since its last
            // use fails its next command, is marked broken, and is not handed out again).
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

impl Connection {
    /// The live gateway nodes as this process last saw them on this connection's Redis.
    pub fn live_gateways(&self) -> Arc<LiveGateways> {
        self.object.live_gateways.clone()
    }
}

impl From<managed::Object<Manager>> for Connection {
    fn from(object: managed::Object<Manager>) -> Self {
        Self { object }
    }
}

impl Deref for Connection {
    type Target = Link;

    fn deref(&self) -> &Link {
        &self.object.conn
    }
}

impl DerefMut for Connection {
    fn deref_mut(&mut self) -> &mut Link {
        &mut self.object.conn
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        Box::pin(async move {
            // A refused write was not executed, so sending it again cannot apply it twice.
            let mut result = self.object.conn.req_packed_command(cmd).await;
            if Box::pin(self.object.follow_after(&result)).await {
                result = self.object.conn.req_packed_command(cmd).await;
            }
            self.object.note_link(&result);
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
            let conn = &mut self.object.conn;
            let mut result = conn.req_packed_commands(cmd, offset, count).await;
            if Box::pin(self.object.follow_after(&result)).await {
                let conn = &mut self.object.conn;
                result = conn.req_packed_commands(cmd, offset, count).await;
            }
            self.object.note_link(&result);
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
        live_gateways: Arc::default(),
    })
    .max_size(POOL_SIZE)
    .wait_timeout(Some(COMMAND_TIMEOUT))
    .create_timeout(Some(FOLLOW_TIMEOUT + CONNECT_TIMEOUT + LOOKUP_TIMEOUT))
    .recycle_timeout(Some(LOOKUP_TIMEOUT))
    .runtime(deadpool::Runtime::Tokio1)
    .build()
    .map_err(|err| RedisConnError::Config(err.to_string()))
}
