//! Test support for the shared crate's integration tests: a private `redis-server` per
//! test, on a port of its own, without persistence, killed when dropped.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;

const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// A `redis-server` on a free port without persistence, killed when dropped.
pub struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    /// Starts the server and waits until it listens.
    pub fn start() -> Self {
        let port = iris_shared::local_port::free_loopback_port().expect("a free port");
        let child = Command::new(REDIS_SERVER)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {REDIS_SERVER}: {err}"));
        let redis = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    /// A connection that has answered PING. It waits for replies as long as they take (the
    /// client's default gives up after 500 ms, which a heavy script on a loaded machine can
    /// outlast); each test bounds its own time.
    pub async fn connect(&self) -> MultiplexedConnection {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}", self.port)).unwrap();
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match client
                .get_multiplexed_async_connection_with_config(&config)
                .await
            {
                Ok(mut conn) => {
                    let pong: redis::RedisResult<String> =
                        redis::cmd("PING").query_async(&mut conn).await;
                    if pong.is_ok() {
                        return conn;
                    }
                }
                Err(err) => assert!(Instant::now() < deadline, "cannot connect: {err}"),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Redis {
    /// A pub/sub connection to the server.
    #[allow(dead_code)] // each test binary compiles this module; only some subscribe
    pub async fn pubsub(&self) -> redis::aio::PubSub {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}", self.port)).unwrap();
        client.get_async_pubsub().await.unwrap()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls so far of every command whose `INFO commandstats` name is in `names` (`expire`,
/// `evalsha`, ...), summed: what a test reads to prove which commands a write ran.
#[allow(dead_code)] // each test binary compiles this module; only some count commands
pub async fn command_calls(conn: &mut MultiplexedConnection, names: &[&str]) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats.strip_prefix("calls=")?.split(',').next()?;
            names.contains(&name).then(|| calls.parse::<u64>().ok())?
        })
        .sum()
}
