//! A Sentinel-managed Redis for one test: a master, one replica of it, and three
//! Sentinels (`redis-server --sentinel`) watching them as `mymaster`; and a real failover.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::child_process::ChildProcess;
use crate::ports::free_port;
use crate::redis_server::{redis_server_command, RedisServer};
use crate::resp::{self, Reply};

/// The master's name at the Sentinels.
pub const MASTER_NAME: &str = "mymaster";
/// How long the replica and the Sentinels may take to find each other.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a failover may take.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(30);

/// The servers and their Sentinels; everything dies with it.
pub struct SentinelGroup {
    servers: Vec<RedisServer>,
    sentinel_ports: Vec<u16>,
    _sentinels: Vec<ChildProcess>,
}

fn reply_strings(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Array(items) => items
            .iter()
            .filter_map(|item| item.text().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what} did not happen within {timeout:?}");
}

/// Which servers refuse writes while their replica is away (`min-replicas-to-write 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Only the first master: a first failover loses nothing, and the promoted replica
    /// takes writes at once.
    FirstMaster,
    /// Both servers: no failover loses a write, but a new master waits for the demoted one
    /// to resync before taking writes.
    EveryMaster,
}

impl SentinelGroup {
    /// Starts the master, its replica and three Sentinels (logs and configs in `dir`) and
    /// waits until every Sentinel knows the replica and its two peers.
    pub fn start(dir: &Path, guard: Guard) -> Self {
        // A replica that must resync (the demoted master, after a failover) gets its data
        // at once instead of after the default 5 s that lets more replicas join one sync: a
        // guarded master takes writes again only once it has.
        let plain = [
            "--save",
            "",
            "--appendonly",
            "no",
            "--repl-diskless-sync-delay",
            "0",
        ];
        // A guarded master takes writes only while its replica follows it, so once the
        // replica is promoted the old master refuses writes instead of taking ones the new
        // master never sees (it is made a replica only when the Sentinels next look at it).
        // This is the configuration docs/reliability.md recommends.
        let guarded = [
            "--min-replicas-to-write",
            "1",
            "--min-replicas-max-lag",
            "10",
        ];
        let mut master_args = plain.to_vec();
        master_args.extend(guarded);
        let master = RedisServer::start_named("redis-master", dir, &master_args);
        let master_port = master.port().to_string();
        let mut replica_args = plain.to_vec();
        if guard == Guard::EveryMaster {
            replica_args.extend(guarded);
        }
        replica_args.extend(["--replicaof", "127.0.0.1", master_port.as_str()]);
        let replica = RedisServer::start_named("redis-replica", dir, &replica_args);
        wait_for(
            "the replica's initial sync",
            SETTLE_TIMEOUT,
            || matches!(replica.command(&["INFO", "replication"]), Ok(Reply::Text(info)) if info.contains("master_link_status:up")),
        );

        let mut sentinel_ports = Vec::new();
        let mut sentinels = Vec::new();
        for index in 0..3 {
            let port = free_port();
            let config = dir.join(format!("sentinel-{index}.conf"));
            let text = format!(
                "port {port}\nbind 127.0.0.1\n\
                 sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n\
                 sentinel down-after-milliseconds {MASTER_NAME} 2000\n\
                 sentinel failover-timeout {MASTER_NAME} 10000\n\
                 sentinel parallel-syncs {MASTER_NAME} 1\n"
            );
            std::fs::write(&config, text)
                .unwrap_or_else(|err| panic!("cannot write {}: {err}", config.display()));
            let mut command = redis_server_command();
            command.arg(&config).arg("--sentinel");
            sentinels.push(ChildProcess::spawn(
                &format!("sentinel-{index}"),
                command,
                dir,
            ));
            sentinel_ports.push(port);
        }
        let group = Self {
            servers: vec![master, replica],
            sentinel_ports,
            _sentinels: sentinels,
        };
        for &port in &group.sentinel_ports {
            wait_for(
                "the Sentinels knowing the replica and each other",
                SETTLE_TIMEOUT,
                || {
                    let replicas = resp::command(port, &["SENTINEL", "REPLICAS", MASTER_NAME]);
                    let peers = resp::command(port, &["SENTINEL", "SENTINELS", MASTER_NAME]);
                    matches!(replicas, Ok(Reply::Array(r)) if !r.is_empty())
                        && matches!(peers, Ok(Reply::Array(p)) if p.len() == 2)
                },
            );
        }
        group
    }

    /// The `IRIS_REDIS_URL` naming the group: `redis+sentinel://…/mymaster`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .sentinel_ports
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect();
        format!("redis+sentinel://{}/{MASTER_NAME}", hosts.join(","))
    }

    /// The port the Sentinels name as master now.
    pub fn master_port(&self) -> u16 {
        let reply = resp::command(
            self.sentinel_ports[0],
            &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME],
        )
        .expect("asking a Sentinel for the master");
        let parts = reply_strings(&reply);
        parts
            .get(1)
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("unexpected master address reply: {reply:?}"))
    }

    /// The server that is master now.
    pub fn master(&self) -> &RedisServer {
        let port = self.master_port();
        self.servers
            .iter()
            .find(|server| server.port() == port)
            .unwrap_or_else(|| panic!("the master port {port} is none of the group's servers"))
    }

    /// Whether the master has a replica that is in sync with it (a failover can promote it).
    pub fn replica_in_sync(&self) -> bool {
        let Ok(Reply::Text(info)) = self.master().command(&["INFO", "replication"]) else {
            return false;
        };
        info.lines()
            .any(|line| line.starts_with("slave0:") && line.contains("state=online"))
    }

    /// Runs `SENTINEL FAILOVER` and waits until the Sentinels name the other server as
    /// master and it answers `ROLE` as one. Returns the new master's port.
    pub fn failover(&self) -> u16 {
        let before = self.master_port();
        let answer = resp::command(
            self.sentinel_ports[0],
            &["SENTINEL", "FAILOVER", MASTER_NAME],
        );
        assert!(
            matches!(answer, Ok(Reply::Text(_))),
            "SENTINEL FAILOVER: {answer:?}"
        );
        let mut after = before;
        wait_for("the failover", FAILOVER_TIMEOUT, || {
            after = self.master_port();
            after != before
                && matches!(resp::command(after, &["ROLE"]), Ok(reply) if reply_strings(&reply).first().map(String::as_str) == Some("master"))
        });
        after
    }
}
