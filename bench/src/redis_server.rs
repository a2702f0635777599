//! The Redis of a spawned cluster: one private `redis-server` (own directory, no
//! persistence), or with `--redis-cluster` the nodes of a private Redis Cluster
//! ([`crate::redis_cluster`]). Either way the nodes get its URL as `IRIS_REDIS_URL`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::node_process::NodeProcess;
use crate::options::Options;

/// Connections one Redis node accepts.
const MAX_CLIENTS: &str = "10000";

/// The Redis processes of a spawned cluster and the URL the nodes are given.
pub struct SpawnedRedis {
    pub processes: Vec<NodeProcess>,
    pub url: String,
}

impl SpawnedRedis {
    /// One Redis, or the Redis Cluster `options` asks for, logging into `run_dir`.
    pub fn start(options: &Options, run_dir: &Path) -> Result<Self> {
        match options.redis_cluster {
            Some(masters) => crate::redis_cluster::start(masters, options.redis_replicas, run_dir),
            None => {
                let port = free_port()?;
                let process = spawn_node("redis", port, &[], run_dir)?;
                Ok(Self {
                    processes: vec![process],
                    url: format!("redis://127.0.0.1:{port}"),
                })
            }
        }
    }
}

/// Starts `redis-server` on `port` with `extra` arguments, in `run_dir/<name>-data`, and
/// waits until it answers PING.
pub fn spawn_node(name: &str, port: u16, extra: &[&str], run_dir: &Path) -> Result<NodeProcess> {
    let dir = run_dir.join(format!("{name}-data"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut command = Command::new(redis_server()?);
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(&dir)
        .args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--maxclients",
            MAX_CLIENTS,
        ])
        .args(extra);
    let process = NodeProcess::spawn(name, command, run_dir)?;
    wait_for_redis(port, &process)?;
    Ok(process)
}

/// `redis-server` from PATH (or where the Debian package puts it).
fn redis_server() -> Result<PathBuf> {
    tool("redis-server")
}

/// `name` (a Redis tool) from PATH, or from /usr/bin.
pub fn tool(name: &str) -> Result<PathBuf> {
    let from_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    let path = from_path.unwrap_or_else(|| Path::new("/usr/bin").join(name));
    if !path.is_file() {
        bail!("{name} not found: install Redis (scripts/install-deps.sh)");
    }
    Ok(path)
}

/// Waits until the Redis on `port` answers PING, so the nodes start against a live one.
fn wait_for_redis(port: u16, process: &NodeProcess) -> Result<()> {
    use std::io::{Read, Write};
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let pong = std::net::TcpStream::connect(("127.0.0.1", port)).and_then(|mut stream| {
            stream.set_read_timeout(Some(Duration::from_secs(1)))?;
            stream.write_all(b"PING\r\n")?;
            let mut reply = [0u8; 7];
            stream.read_exact(&mut reply)?;
            Ok(reply.starts_with(b"+PONG"))
        });
        if pong.unwrap_or(false) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!(
        "redis-server on port {port} never answered PING\n{}",
        process.log_tail(20)
    )
}

/// A local port no listener holds (`iris_shared::local_port` says why from which range).
pub fn free_port() -> Result<u16> {
    iris_shared::local_port::free_loopback_port().context("no free loopback port left")
}
