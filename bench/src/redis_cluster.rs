//! A private Redis Cluster for a spawned benchmark cluster (`--redis-cluster M
//! --redis-replicas R`): M × (1 + R) `redis-server --cluster-enabled yes` nodes, each in a
//! directory of its own, joined with `redis-cli --cluster create` (which needs 3 masters
//! or more; 1 or 2 masters are joined by hand with the same even split of the slots), then
//! awaited until every node says `cluster_state:ok` and every replica's link to its master
//! is up. The nodes are given `redis+cluster://` with every node as a seed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::cluster_nodes::SLOTS;
use crate::node_process::NodeProcess;
use crate::redis_server::{free_port, spawn_node, tool, SpawnedRedis};

/// How long the cluster may take to form.
const FORM_TIMEOUT: Duration = Duration::from_secs(30);
/// A node's cluster bus listens this far above its port.
const BUS_OFFSET: u16 = 10_000;
/// The ports handed out end below the kernel's ephemeral range (see
/// `iris_shared::local_port`); a node's bus port must too.
const PORTS_END: u16 = 32_768;

/// Starts the nodes, forms the cluster and waits until it serves every slot.
pub fn start(masters: u16, replicas: u16, run_dir: &Path) -> Result<SpawnedRedis> {
    if masters == 0 {
        bail!("--redis-cluster needs at least 1 master");
    }
    let total = usize::from(masters) * (1 + usize::from(replicas));
    let mut processes = Vec::new();
    let mut ports = Vec::new();
    for index in 0..total {
        let port = node_port()?;
        let name = format!("redis-{}", index + 1);
        let extra = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
            "--repl-diskless-sync-delay",
            "0",
        ];
        processes.push(spawn_node(&name, port, &extra, run_dir)?);
        ports.push(port);
    }
    let nodes: Vec<Node> = ports
        .iter()
        .map(|&port| Node::connect(port))
        .collect::<Result<_>>()?;
    if masters >= 3 {
        create_with_redis_cli(&ports, replicas, run_dir)?;
    } else {
        form_by_hand(&nodes, usize::from(masters))?;
    }
    wait_formed(&nodes, usize::from(masters), &processes)?;
    let seeds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    Ok(SpawnedRedis {
        processes,
        url: format!("redis+cluster://{}", seeds.join(",")),
    })
}

/// A free port P whose bus port P + 10000 is free as well.
fn node_port() -> Result<u16> {
    for _ in 0..10_000 {
        let port = free_port()?;
        let Some(bus) = port.checked_add(BUS_OFFSET).filter(|bus| *bus < PORTS_END) else {
            continue;
        };
        if std::net::TcpListener::bind(("127.0.0.1", bus)).is_ok() {
            return Ok(port);
        }
    }
    bail!("no free port P with P + {BUS_OFFSET} free for a Redis Cluster node")
}

/// `redis-cli --cluster create`: the first `ports.len() / (1 + replicas)` nodes become the
/// masters, the rest their replicas.
fn create_with_redis_cli(ports: &[u16], replicas: u16, run_dir: &Path) -> Result<()> {
    let log_path = run_dir.join("redis-cli-create.log");
    let output = Command::new(tool("redis-cli")?)
        .arg("--cluster")
        .arg("create")
        .args(ports.iter().map(|port| format!("127.0.0.1:{port}")))
        .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
        .output()
        .context("running redis-cli --cluster create")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::write(&log_path, &text).with_context(|| format!("writing {}", log_path.display()))?;
    if !output.status.success() || text.contains("[ERR]") {
        bail!(
            "redis-cli --cluster create failed ({}):\n{text}",
            output.status
        );
    }
    Ok(())
}

/// What `redis-cli --cluster create` does, for fewer than 3 masters: a distinct config
/// epoch per node, the slots split evenly over the first `masters` nodes, every node met,
/// and each further node made a replica of a master in turn.
fn form_by_hand(nodes: &[Node], masters: usize) -> Result<()> {
    for (index, node) in nodes.iter().enumerate() {
        node.query_ok(redis::cmd("CLUSTER").arg("SET-CONFIG-EPOCH").arg(index + 1))?;
    }
    for (index, node) in nodes.iter().take(masters).enumerate() {
        let (first, last) = slot_share(index, masters);
        node.query_ok(
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(first)
                .arg(last),
        )?;
    }
    for node in &nodes[1..] {
        nodes[0].query_ok(
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port),
        )?;
    }
    let deadline = Instant::now() + FORM_TIMEOUT;
    for (index, replica) in nodes.iter().enumerate().skip(masters) {
        let master_id = nodes[index % masters].id()?;
        // A node can follow a master only once it has heard of it.
        loop {
            let known: String = replica.query(redis::cmd("CLUSTER").arg("NODES"))?;
            if known
                .lines()
                .any(|l| l.starts_with(&master_id) && !l.contains("handshake"))
            {
                break;
            }
            if Instant::now() > deadline {
                bail!("node {} never learnt of master {master_id}", replica.port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        replica.query_ok(redis::cmd("CLUSTER").arg("REPLICATE").arg(&master_id))?;
    }
    Ok(())
}

/// The inclusive slot range master `index` of `masters` serves (as even as can be).
pub fn slot_share(index: usize, masters: usize) -> (u32, u32) {
    let masters = masters.max(1) as u32;
    let index = index as u32;
    (index * SLOTS / masters, (index + 1) * SLOTS / masters - 1)
}

/// Waits until every node says `cluster_state:ok` and knows every other node, and every
/// node after the first `masters` is a replica whose link to its master is up.
fn wait_formed(nodes: &[Node], masters: usize, processes: &[NodeProcess]) -> Result<()> {
    let deadline = Instant::now() + FORM_TIMEOUT;
    loop {
        let mut waiting = None;
        for (index, node) in nodes.iter().enumerate() {
            let info: String = node.query(redis::cmd("CLUSTER").arg("INFO"))?;
            let known = format!("cluster_known_nodes:{}", nodes.len());
            if !info.contains("cluster_state:ok") || !info.contains(&known) {
                waiting = Some(format!("node {}: {}", node.port, info.replace("\r\n", " ")));
            } else if index >= masters {
                let replication: String = node.query(redis::cmd("INFO").arg("replication"))?;
                if !replication.contains("master_link_status:up") {
                    waiting = Some(format!("replica {}: master link not up", node.port));
                }
            }
            if waiting.is_some() {
                break;
            }
        }
        let Some(reason) = waiting else { return Ok(()) };
        if Instant::now() > deadline {
            let logs: Vec<String> = processes.iter().map(|p| p.log_tail(10)).collect();
            bail!(
                "the Redis Cluster did not form within {FORM_TIMEOUT:?}: {reason}\n{}",
                logs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A plain connection to one node, for forming the cluster.
struct Node {
    port: u16,
    connection: std::cell::RefCell<redis::Connection>,
}

impl Node {
    fn connect(port: u16) -> Result<Self> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}"))?;
        let connection = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .with_context(|| format!("connecting to Redis Cluster node {port}"))?;
        connection.set_read_timeout(Some(Duration::from_secs(5)))?;
        Ok(Self {
            port,
            connection: std::cell::RefCell::new(connection),
        })
    }

    fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        cmd.query(&mut *self.connection.borrow_mut())
            .with_context(|| format!("node {}", self.port))
    }

    fn query_ok(&self, cmd: &redis::Cmd) -> Result<()> {
        self.query::<redis::Value>(cmd).map(drop)
    }

    /// The node's id.
    fn id(&self) -> Result<String> {
        self.query(redis::cmd("CLUSTER").arg("MYID"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_are_split_evenly_and_completely() {
        assert_eq!(slot_share(0, 1), (0, 16383));
        assert_eq!(slot_share(0, 2), (0, 8191));
        assert_eq!(slot_share(1, 2), (8192, 16383));
        let three: Vec<(u32, u32)> = (0..3).map(|i| slot_share(i, 3)).collect();
        assert_eq!(three, [(0, 5460), (5461, 10921), (10922, 16383)]);
        for masters in 1..=7 {
            let mut next = 0;
            for index in 0..masters {
                let (first, last) = slot_share(index, masters);
                assert_eq!(first, next);
                next = last + 1;
            }
            assert_eq!(next, SLOTS);
        }
    }
}
