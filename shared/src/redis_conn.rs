//! Redis connections: a pool for ordinary commands and dedicated connections for
//! blocking reads.
//!
//! A blocking `XREAD`/`XREADGROUP` must never share a multiplexed connection with other
//! commands (they would queue behind the block), and must not be cut off by the client's
//! default response timeout, so each blocking loop owns one connection of its own.

use std::time::Duration;

use deadpool_redis::{Config, Pool, Runtime};
use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;

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
    Pool(#[from] deadpool_redis::PoolError),
}

/// How long an ordinary command may take before it counts as failed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// How long establishing a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest number of pooled connections per process.
pub const POOL_SIZE: usize = 32;

/// A connection pool for ordinary (non-blocking) commands.
pub fn pool(redis_url: &str) -> Result<Pool, RedisConnError> {
    let mut config = Config::from_url(redis_url);
    config.pool = Some(deadpool_redis::PoolConfig {
        max_size: POOL_SIZE,
        timeouts: deadpool_redis::Timeouts {
            wait: Some(COMMAND_TIMEOUT),
            create: Some(CONNECT_TIMEOUT),
            recycle: Some(CONNECT_TIMEOUT),
        },
        ..Default::default()
    });
    config
        .create_pool(Some(Runtime::Tokio1))
        .map_err(|err| RedisConnError::Config(err.to_string()))
}

/// A connection of its own for one blocking-read loop: no response timeout, because the
/// loop's `BLOCK` argument bounds each call.
pub async fn blocking_connection(redis_url: &str) -> Result<MultiplexedConnection, RedisConnError> {
    let client = redis::Client::open(redis_url)?;
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(None);
    Ok(client
        .get_multiplexed_async_connection_with_config(&config)
        .await?)
}
