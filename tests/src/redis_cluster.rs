//! A Redis Cluster for one test: six `redis-server --cluster-enabled yes` nodes, each in a
//! directory of its own, made three masters with one replica each by
//! `redis-cli --cluster create`; and what a test does to it: kill a master and wait for
//! its replica's promotion, restart the killed node (it rejoins as a replica), move slots
//! while traffic flows (`redis-cli --cluster reshard`), send a command to the node owning
//! its key (following `-MOVED` and `-ASK`), and read each node's load. Everything dies
//! with the value.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use iris_shared::redis_conn::slots::slot_of;

use crate::child_process::ChildProcess;
use crate::ports::free_cluster_port;
use crate::redis_server::RedisServer;
use crate::resp::{self, Reply};

/// Where the Debian package installs the client that creates and reshards clusters.
const REDIS_CLI: &str = "/usr/bin/redis-cli";
/// How many nodes a cluster has: three masters, one replica each.
pub const NODES: usize = 6;
/// How many masters a whole cluster has.
pub const MASTERS: usize = 3;
/// Redis Cluster's number of hash slots.
pub const SLOTS: u16 = 16384;
/// Every node's settings. The short node timeout makes a failover take seconds; without
/// the zero diskless-sync delay a replica syncs only after 5 s, and a master killed before
/// that is never failed over.
const NODE_ARGS: &[&str] = &[
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "2000",
    "--repl-diskless-sync-delay",
    "0",
    "--save",
    "",
    "--appendonly",
    "no",
];
/// How long forming the cluster, or a node rejoining it, may take.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a failover may take (about 4 s here with a 2 s node timeout).
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one `redis-cli --cluster` run may take.
const CLI_TIMEOUT: Duration = Duration::from_secs(120);
/// How many redirects (or reconnects) one command may follow before giving up.
const MAX_HOPS: usize = 16;

/// One node.
struct Node {
    server: RedisServer,
    /// Its cluster node id (kept in its `nodes.conf`, so it survives restarts).
    id: String,
    /// False from a kill until the restart.
    alive: bool,
    /// The replicas it had when it was killed as a master: the candidates for promotion.
    replicas_at_kill: Vec<u16>,
}

/// A replica as it reports itself (`INFO replication`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaOf {
    /// The replica's port.
    pub port: u16,
    /// The port of the master it follows.
    pub master: u16,
    /// Whether its link to the master is up (`master_link_status:up`).
    pub link_up: bool,
}

/// How much work one node has done since it started (`INFO commandstats`, `INFO cpu`).
/// Benches take two snapshots and subtract; the harness's own `INFO` and `CLUSTER`
/// commands are counted too.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLoad {
    /// The node's port.
    pub port: u16,
    /// Whether it is a master now.
    pub is_master: bool,
    /// Calls of every command, summed.
    pub calls: u64,
    /// `used_cpu_sys + used_cpu_user`, in seconds.
    pub cpu_seconds: f64,
}

/// How many redirects [`RedisCluster::command`] has followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Redirects {
    /// `-MOVED` replies: the slot lives elsewhere for good.
    pub moved: u64,
    /// `-ASK` replies: the slot is being migrated and the key already left.
    pub ask: u64,
}

/// A `redis-cli --cluster` run in the background (a reshard, say), logging to a file in
/// the cluster's directory; killed if dropped unfinished.
pub struct CliJob {
    what: String,
    process: ChildProcess,
}

impl CliJob {
    fn spawn(what: &str, log_name: &str, args: &[String], dir: &Path) -> Self {
        assert!(
            Path::new(REDIS_CLI).is_file(),
            "{REDIS_CLI} is missing: run `scripts/install-deps.sh` to install redis-tools"
        );
        let mut command = Command::new(REDIS_CLI);
        command.args(args);
        Self {
            what: what.to_owned(),
            process: ChildProcess::spawn(log_name, command, dir),
        }
    }

    /// Whether the run has ended (successfully or not).
    pub fn is_done(&mut self) -> bool {
        self.process.exit_status().is_some()
    }

    /// Waits until the run ends and returns its output; panics, with the output, if it
    /// failed or took longer than two minutes.
    pub fn wait(mut self) -> String {
        let deadline = Instant::now() + CLI_TIMEOUT;
        let status = loop {
            if let Some(status) = self.process.exit_status() {
                break status;
            }
            if Instant::now() >= deadline {
                panic!(
                    "{} did not finish within {CLI_TIMEOUT:?}\n{}",
                    self.what,
                    self.process.diagnostics(40)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(
            status.success(),
            "{} failed\n{}",
            self.what,
            self.process.diagnostics(40)
        );
        self.process.log_text()
    }
}

/// A running Redis Cluster owned by one test.
pub struct RedisCluster {
    dir: PathBuf,
    nodes: Vec<Node>,
    /// The owner of every slot as last seen, for routing [`RedisCluster::command`]; empty
    /// until first needed, and forgotten when a node stops answering.
    slot_cache: Mutex<Vec<u16>>,
    moved: AtomicU64,
    ask: AtomicU64,
    /// `redis-cli` runs so far, naming their logs apart.
    cli_runs: AtomicUsize,
}

impl RedisCluster {
    /// Starts six nodes (logs in `dir`, data in `dir/redis-node-N-data`), makes them a
    /// cluster of three masters with one replica each, and waits until every node reports
    /// `cluster_state:ok`, all agree on who owns which slot, and every replica's link to
    /// its master is up.
    pub fn start(dir: &Path) -> Self {
        let servers: Vec<RedisServer> = (1..=NODES)
            .map(|n| {
                let name = format!("redis-node-{n}");
                RedisServer::start_on(free_cluster_port(), &name, dir, NODE_ARGS)
            })
            .collect();
        let mut cluster = Self {
            dir: dir.to_owned(),
            nodes: Vec::new(),
            slot_cache: Mutex::new(Vec::new()),
            moved: AtomicU64::new(0),
            ask: AtomicU64::new(0),
            cli_runs: AtomicUsize::new(0),
        };
        let mut args = vec!["--cluster".to_owned(), "create".to_owned()];
        args.extend(servers.iter().map(|s| format!("127.0.0.1:{}", s.port())));
        args.extend(["--cluster-replicas", "1", "--cluster-yes"].map(str::to_owned));
        cluster.cli("redis-cli --cluster create", &args).wait();
        cluster.nodes = servers
            .into_iter()
            .map(|server| {
                let id = match server.command(&["CLUSTER", "MYID"]) {
                    Ok(Reply::Text(id)) => id,
                    other => panic!("CLUSTER MYID on {}: {other:?}", server.port()),
                };
                Node {
                    server,
                    id,
                    alive: true,
                    replicas_at_kill: Vec::new(),
                }
            })
            .collect();
        cluster.wait_for_ok();
        cluster
    }

    fn cli(&self, what: &str, args: &[String]) -> CliJob {
        let run = self.cli_runs.fetch_add(1, Ordering::Relaxed) + 1;
        CliJob::spawn(what, &format!("redis-cli-{run}"), args, &self.dir)
    }

    /// The `IRIS_REDIS_URL` naming the cluster: `redis+cluster://` and all six nodes.
    pub fn url(&self) -> String {
        let seeds: Vec<String> = self
            .node_ports()
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect();
        format!("redis+cluster://{}", seeds.join(","))
    }

    /// Every node's port, in start order, killed ones included.
    pub fn node_ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|node| node.server.port()).collect()
    }

    /// Ports of the nodes not killed, in start order.
    pub fn live_ports(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .filter(|node| node.alive)
            .map(|node| node.server.port())
            .collect()
    }

    fn node(&self, port: u16) -> &Node {
        self.nodes
            .iter()
            .find(|node| node.server.port() == port)
            .unwrap_or_else(|| panic!("port {port} is none of the cluster's nodes"))
    }

    fn node_mut(&mut self, port: u16) -> &mut Node {
        self.nodes
            .iter_mut()
            .find(|node| node.server.port() == port)
            .unwrap_or_else(|| panic!("port {port} is none of the cluster's nodes"))
    }

    /// The cluster node id of the node on `port`.
    pub fn node_id(&self, port: u16) -> &str {
        &self.node(port).id
    }

    /// Ports of the live nodes that report `role:master` now, in start order.
    pub fn masters(&self) -> Vec<u16> {
        self.live_ports()
            .into_iter()
            .filter(|&port| {
                info(port, "replication").is_ok_and(|info| field(&info, "role") == Some("master"))
            })
            .collect()
    }

    /// The live nodes that report `role:slave` now, with whom they follow, in start order.
    pub fn replicas(&self) -> Vec<ReplicaOf> {
        self.live_ports()
            .into_iter()
            .filter_map(|port| replica_of(port).ok().flatten())
            .collect()
    }

    /// Kills a master with SIGKILL and returns its port. `master` below [`NODES`] is an
    /// index into [`RedisCluster::masters`]; anything else is a port (every node port is
    /// far above). Its replicas now are remembered for [`RedisCluster::wait_failover_of`].
    pub fn kill_master(&mut self, master: u16) -> u16 {
        let masters = self.masters();
        let port = if usize::from(master) < NODES {
            *masters
                .get(usize::from(master))
                .unwrap_or_else(|| panic!("no master number {master}: the masters are {masters:?}"))
        } else {
            assert!(
                masters.contains(&master),
                "{master} is not a master now: the masters are {masters:?}"
            );
            master
        };
        let replicas: Vec<u16> = self
            .replicas()
            .into_iter()
            .filter(|replica| replica.master == port)
            .map(|replica| replica.port)
            .collect();
        self.kill_node(port);
        self.node_mut(port).replicas_at_kill = replicas;
        port
    }

    /// Kills the node on `port` (master or replica) with SIGKILL.
    pub fn kill_node(&mut self, port: u16) {
        let node = self.node_mut(port);
        node.server.kill();
        node.alive = false;
        node.replicas_at_kill.clear();
        self.forget_slots();
    }

    /// Waits until one of the replicas the master on `port` had when it was killed reports
    /// `role:master`, the live nodes count three masters, and every live node reports
    /// `cluster_state:ok`; returns the promoted replica's port. (`cluster_state:ok` alone
    /// says nothing: the survivors report it until they mark the master failed.)
    pub fn wait_failover_of(&self, port: u16) -> u16 {
        let node = self.node(port);
        assert!(!node.alive, "{port} was not killed with kill_master");
        let candidates = node.replicas_at_kill.clone();
        assert!(
            !candidates.is_empty(),
            "{port} had no replica when it was killed as a master: nothing can take over"
        );
        let promoted =
            self.wait_until(&format!("the failover of {port}"), FAILOVER_TIMEOUT, || {
                let promoted = candidates
                    .iter()
                    .copied()
                    .find(|&candidate| {
                        info(candidate, "replication")
                            .is_ok_and(|info| field(&info, "role") == Some("master"))
                    })
                    .ok_or_else(|| format!("none of {candidates:?} reports role:master"))?;
                let masters = self.masters();
                if masters.len() != MASTERS {
                    return Err(format!("the live masters are {masters:?}"));
                }
                self.states_ok()?;
                Ok(promoted)
            });
        self.forget_slots();
        promoted
    }

    /// Starts the killed node on `port` again on its own directory (the same `nodes.conf`,
    /// so the same node id) and waits until it reports `role:slave` with its link up: a
    /// failed-over master rejoins as a replica of its successor, a replica of its master.
    /// Returns the port of the master it follows.
    pub fn restart(&mut self, port: u16) -> u16 {
        let node = self.node_mut(port);
        assert!(
            !node.alive,
            "{port} is running: kill it before restarting it"
        );
        node.server.restart();
        node.alive = true;
        node.replicas_at_kill.clear();
        self.wait_until(
            &format!("restarted node {port} rejoining as a replica"),
            SETTLE_TIMEOUT,
            || match replica_of(port)? {
                Some(replica) if replica.link_up => {
                    cluster_state_ok(port)?;
                    Ok(replica.master)
                }
                other => Err(format!("it reports {other:?}")),
            },
        )
    }

    /// Starts `redis-cli --cluster reshard` moving `slots` slots from the master on
    /// `from_port` to the master on `to_port`, in the background, after waiting until the
    /// cluster is whole (redis-cli refuses a cluster whose nodes disagree).
    pub fn reshard(&self, from_port: u16, to_port: u16, slots: u16) -> CliJob {
        self.wait_for_ok();
        let any = self.live_ports()[0];
        let args = [
            "--cluster".to_owned(),
            "reshard".to_owned(),
            format!("127.0.0.1:{any}"),
            "--cluster-from".to_owned(),
            self.node_id(from_port).to_owned(),
            "--cluster-to".to_owned(),
            self.node_id(to_port).to_owned(),
            "--cluster-slots".to_owned(),
            slots.to_string(),
            "--cluster-yes".to_owned(),
        ];
        let what = format!("resharding {slots} slots from {from_port} to {to_port}");
        self.cli(&what, &args)
    }

    /// [`RedisCluster::reshard`], then waits for it to end and for every node to agree on
    /// the new owners.
    pub fn reshard_blocking(&self, from_port: u16, to_port: u16, slots: u16) {
        self.reshard(from_port, to_port, slots).wait();
        self.wait_for_ok();
    }

    /// Waits until every live node reports `cluster_state:ok`, all agree on the owner of
    /// every slot, three of them are masters, and every live replica's link is up.
    pub fn wait_for_ok(&self) {
        self.wait_until("the cluster becoming whole", SETTLE_TIMEOUT, || {
            self.states_ok()?;
            let ports = self.live_ports();
            let first = slot_owners_seen_by(ports[0])?;
            for &port in &ports[1..] {
                if slot_owners_seen_by(port)? != first {
                    return Err(format!("{port} and {} disagree on slot owners", ports[0]));
                }
            }
            let masters = self.masters();
            if masters.len() != MASTERS {
                return Err(format!("the live masters are {masters:?}"));
            }
            let replicas = self.replicas();
            if let Some(down) = replicas.iter().find(|replica| !replica.link_up) {
                return Err(format!("replica {down:?} has its link down"));
            }
            if masters.len() + replicas.len() != ports.len() {
                return Err(format!(
                    "masters {masters:?} and replicas {replicas:?} are not all of {ports:?}"
                ));
            }
            Ok(())
        });
        self.forget_slots();
    }

    /// Waits until every live replica has applied everything its master had written when
    /// this was called (so a failover now loses no acknowledged write).
    pub fn wait_replicas_caught_up(&self) {
        let targets: HashMap<u16, u64> = self
            .masters()
            .into_iter()
            .filter_map(|port| {
                let info = info(port, "replication").ok()?;
                Some((port, field(&info, "master_repl_offset")?.parse().ok()?))
            })
            .collect();
        self.wait_until("the replicas catching up", SETTLE_TIMEOUT, || {
            for replica in self.replicas() {
                let Some(&target) = targets.get(&replica.master) else {
                    continue;
                };
                let info = info(replica.port, "replication")?;
                let offset: u64 = field(&info, "slave_repl_offset")
                    .and_then(|offset| offset.parse().ok())
                    .unwrap_or(0);
                if offset < target {
                    return Err(format!("{} is at {offset} of {target}", replica.port));
                }
            }
            Ok(())
        });
    }

    fn states_ok(&self) -> Result<(), String> {
        self.live_ports().into_iter().try_for_each(cluster_state_ok)
    }

    fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut() -> Result<T, String>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            match check() {
                Ok(value) => return value,
                Err(why) if Instant::now() >= deadline => panic!(
                    "{what} did not happen within {timeout:?}: {why} (node logs in {})",
                    self.dir.display()
                ),
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// The hash slot of `key`, as the cluster computes it (`CLUSTER KEYSLOT`).
    pub fn slot_of(&self, key: &str) -> u16 {
        let port = self.live_ports()[0];
        match resp::command(port, &["CLUSTER", "KEYSLOT", key]) {
            Ok(Reply::Integer(slot)) => u16::try_from(slot).expect("a slot fits in u16"),
            other => panic!("CLUSTER KEYSLOT {key:?} on {port}: {other:?}"),
        }
    }

    /// The owner of every slot (index: slot, value: master port; 0 if unassigned), as the
    /// first live node sees it.
    pub fn slot_owners(&self) -> Vec<u16> {
        let port = self.live_ports()[0];
        slot_owners_seen_by(port).unwrap_or_else(|why| panic!("CLUSTER SLOTS on {port}: {why}"))
    }

    /// The port of the master owning `slot`, as the first live node sees it.
    pub fn master_of_slot(&self, slot: u16) -> u16 {
        self.slot_owners()[usize::from(slot)]
    }

    /// Runs one command (name first) on the node owning its key, and returns its reply.
    /// It is routed by the slot of its first argument (the key of most commands; for a
    /// keyless command, just some node) and follows `-MOVED` (and `-ASK`, sending `ASKING`
    /// first on the same connection), so a command whose key comes later lands right too.
    /// A node that stops answering makes it reread the slot owners and try again.
    pub fn command(&self, args: &[&str]) -> io::Result<Reply> {
        let mut target = self.route(args);
        let mut asking = false;
        let mut last_error = None;
        for _ in 0..MAX_HOPS {
            let reply = if asking {
                resp::commands(target, &[&["ASKING"], args]).map(|mut replies| replies.remove(1))
            } else {
                resp::command(target, args)
            };
            asking = false;
            match reply {
                Ok(Reply::Error(error)) if error.starts_with("MOVED ") => {
                    self.moved.fetch_add(1, Ordering::Relaxed);
                    let (slot, port) = parse_redirect(&error)?;
                    let mut cache = self.slot_cache.lock().expect("slot cache");
                    if let Some(owner) = cache.get_mut(usize::from(slot)) {
                        *owner = port;
                    }
                    target = port;
                }
                Ok(Reply::Error(error)) if error.starts_with("ASK ") => {
                    self.ask.fetch_add(1, Ordering::Relaxed);
                    target = parse_redirect(&error)?.1;
                    asking = true;
                }
                Ok(reply) => return Ok(reply),
                Err(error) => {
                    // Killed, or failed over under us: the owners may have changed.
                    last_error = Some(error);
                    self.forget_slots();
                    std::thread::sleep(Duration::from_millis(100));
                    target = self.route(args);
                }
            }
        }
        Err(last_error.unwrap_or_else(|| {
            io::Error::other(format!("{args:?} redirected more than {MAX_HOPS} times"))
        }))
    }

    /// How many redirects [`RedisCluster::command`] has followed so far.
    pub fn redirects(&self) -> Redirects {
        Redirects {
            moved: self.moved.load(Ordering::Relaxed),
            ask: self.ask.load(Ordering::Relaxed),
        }
    }

    /// Where [`RedisCluster::command`] sends `args` first.
    fn route(&self, args: &[&str]) -> u16 {
        let live = self.live_ports();
        let any = live[0];
        let Some(key) = args.get(1) else {
            return any;
        };
        let mut cache = self.slot_cache.lock().expect("slot cache");
        if cache.is_empty() {
            if let Some(owners) = live.iter().find_map(|&port| slot_owners_seen_by(port).ok()) {
                *cache = owners;
            }
        }
        // Computed as every node does, so routing needs no round trip.
        match cache.get(usize::from(slot_of(key))) {
            Some(&owner) if live.contains(&owner) => owner,
            _ => any,
        }
    }

    fn forget_slots(&self) {
        self.slot_cache.lock().expect("slot cache").clear();
    }

    /// Every live node's load now.
    pub fn node_loads(&self) -> Vec<NodeLoad> {
        self.live_ports()
            .into_iter()
            .map(|port| {
                let stats = info(port, "commandstats")
                    .unwrap_or_else(|why| panic!("INFO commandstats on {port}: {why}"));
                let calls = stats
                    .lines()
                    .filter_map(|line| line.split_once("calls=")?.1.split(',').next())
                    .filter_map(|calls| calls.parse::<u64>().ok())
                    .sum();
                let cpu =
                    info(port, "cpu").unwrap_or_else(|why| panic!("INFO cpu on {port}: {why}"));
                let seconds = |name| {
                    field(&cpu, name)
                        .and_then(|value| value.parse::<f64>().ok())
                        .unwrap_or(0.0)
                };
                let replication = info(port, "replication").unwrap_or_default();
                NodeLoad {
                    port,
                    is_master: field(&replication, "role") == Some("master"),
                    calls,
                    cpu_seconds: seconds("used_cpu_sys") + seconds("used_cpu_user"),
                }
            })
            .collect()
    }

    /// Every node's path, status and last `lines` log lines, for a failure report.
    pub fn diagnostics(&mut self, lines: usize) -> String {
        let mut report = vec![format!("redis cluster in {}", self.dir.display())];
        for node in &mut self.nodes {
            report.push(node.server.process_mut().diagnostics(lines));
        }
        report.join("\n")
    }
}

/// `INFO <section>` of the node on `port`.
fn info(port: u16, section: &str) -> Result<String, String> {
    match resp::command(port, &["INFO", section]) {
        Ok(Reply::Text(text)) => Ok(text),
        other => Err(format!("INFO {section} on {port}: {other:?}")),
    }
}

/// The value of `name:value` in an `INFO` text.
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        line.strip_prefix(name)?
            .strip_prefix(':')
            .map(str::trim_end)
    })
}

/// Whom the node on `port` follows, if it is a replica.
fn replica_of(port: u16) -> Result<Option<ReplicaOf>, String> {
    let info = info(port, "replication")?;
    if field(&info, "role") != Some("slave") {
        return Ok(None);
    }
    let master = field(&info, "master_port")
        .and_then(|master| master.parse().ok())
        .ok_or_else(|| format!("{port} is a replica without a master_port"))?;
    Ok(Some(ReplicaOf {
        port,
        master,
        link_up: field(&info, "master_link_status") == Some("up"),
    }))
}

fn cluster_state_ok(port: u16) -> Result<(), String> {
    match resp::command(port, &["CLUSTER", "INFO"]) {
        Ok(Reply::Text(text)) if field(&text, "cluster_state") == Some("ok") => Ok(()),
        other => Err(format!("CLUSTER INFO on {port}: {other:?}")),
    }
}

/// The owner of every slot as the node on `port` sees it (`CLUSTER SLOTS`).
fn slot_owners_seen_by(port: u16) -> Result<Vec<u16>, String> {
    let reply = resp::command(port, &["CLUSTER", "SLOTS"])
        .map_err(|err| format!("CLUSTER SLOTS on {port}: {err}"))?;
    let Reply::Array(ranges) = reply else {
        return Err(format!("CLUSTER SLOTS on {port}: {reply:?}"));
    };
    let mut owners = vec![0; usize::from(SLOTS)];
    for range in &ranges {
        let parsed = match range.clone() {
            Reply::Array(parts) => match parts.as_slice() {
                [Reply::Integer(start), Reply::Integer(end), Reply::Array(master), ..] => {
                    match master.get(1) {
                        Some(Reply::Integer(owner)) => Some((*start, *end, *owner)),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        let (start, end, owner) =
            parsed.ok_or_else(|| format!("CLUSTER SLOTS on {port}: odd range {range:?}"))?;
        let owner = u16::try_from(owner).map_err(|_| format!("bad port {owner}"))?;
        for slot in start..=end {
            if let Some(entry) = usize::try_from(slot).ok().and_then(|s| owners.get_mut(s)) {
                *entry = owner;
            }
        }
    }
    Ok(owners)
}

/// The slot and port of a `MOVED <slot> <host>:<port>` or `ASK …` error.
fn parse_redirect(error: &str) -> io::Result<(u16, u16)> {
    let mut words = error.split_whitespace().skip(1);
    let slot = words.next().and_then(|slot| slot.parse().ok());
    let port = words
        .next()
        .and_then(|addr| addr.rsplit_once(':'))
        .and_then(|(_, port)| port.parse().ok());
    slot.zip(port).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected redirect {error:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_name_their_slot_and_port() {
        assert_eq!(
            parse_redirect("MOVED 3999 127.0.0.1:6381").unwrap(),
            (3999, 6381)
        );
        assert_eq!(
            parse_redirect("ASK 12182 127.0.0.1:20001").unwrap(),
            (12182, 20001)
        );
        assert!(parse_redirect("MOVED nonsense").is_err());
    }
}
