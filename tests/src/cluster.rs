//! A whole Iris Cluster for one test: a private Redis, gateway and worker processes
//! started from the built binaries, and the operator's actions on them (tokens, crashes).
//! Dropping it kills every process; if the test is failing, it first prints each
//! process's log path and last log lines. Who holds which lease is asked in `leases`; data
//! a Redis shard loses is shown by rewriting its keys in `redis_loss`.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

mod leases;
mod redis_loss;

use crate::binaries::{binary, GATEWAY, WORKER};
use crate::child_process::ChildProcess;
use crate::client::Client;
use crate::cluster_spec::{gateway_node_id, worker_node_id, ClusterSpec, RedisKind};
use crate::http_probe;
use crate::ports::free_port;
use crate::redis_cluster::RedisCluster;
use crate::redis_server::RedisServer;
use crate::resp::Reply;
use crate::scratch_dir::ScratchDir;
use crate::sentinel_group::{Guard, SentinelGroup};

/// How long nodes may take to become ready (tests start many processes in parallel).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Log lines shown per process when a test fails.
const LOG_LINES_ON_FAILURE: usize = 40;
/// Log filter given to the nodes.
const NODE_LOG_FILTER: &str = "info,iris_gateway=debug,iris_worker=debug,iris_shared=debug";

/// A started gateway node.
#[derive(Debug)]
struct GatewayNode {
    addr: SocketAddr,
    process: ChildProcess,
}

/// The cluster's Redis.
enum Backing {
    Single(RedisServer),
    Sentinel(SentinelGroup),
    Cluster(RedisCluster),
}

/// A running cluster; everything dies with it.
pub struct Cluster {
    partitions: u32,
    redis: Backing,
    gateways: Vec<GatewayNode>,
    workers: Vec<ChildProcess>,
    /// Each worker's `IRIS_METRICS_LISTEN` address (kept for restarts).
    worker_http: Vec<SocketAddr>,
    /// Extra environment of every gateway and every worker (kept for restarts).
    gateway_env: Vec<(String, String)>,
    worker_env: Vec<(String, String)>,
    /// Processes started so far, naming the log of each restart apart.
    starts: usize,
    /// Declared last: dropped after the processes, kept on failure for their logs.
    scratch: ScratchDir,
}

impl Cluster {
    /// Starts Redis, then the gateways and workers of `spec`, and waits until every gateway
    /// answers `/readyz` 200 and every worker is registered and every partition leased.
    /// `label` names the test's log directory. Panics at once if a binary is not built.
    pub async fn start(label: &str, spec: ClusterSpec) -> Self {
        if spec.gateways > 0 {
            binary(GATEWAY);
        }
        if spec.workers > 0 {
            binary(WORKER);
        }
        let scratch = ScratchDir::new(label);
        let redis = match spec.redis {
            RedisKind::Plain => Backing::Single(RedisServer::start(scratch.path())),
            RedisKind::Durable => {
                Backing::Single(RedisServer::start_durable("redis", scratch.path()))
            }
            RedisKind::Sentinel => {
                Backing::Sentinel(SentinelGroup::start(scratch.path(), Guard::FirstMaster))
            }
            RedisKind::SentinelEveryMasterGuarded => {
                Backing::Sentinel(SentinelGroup::start(scratch.path(), Guard::EveryMaster))
            }
            RedisKind::Cluster => Backing::Cluster(RedisCluster::start(scratch.path())),
        };
        let mut cluster = Self {
            partitions: spec.partitions,
            redis,
            gateways: Vec::new(),
            workers: Vec::new(),
            worker_http: Vec::new(),
            gateway_env: spec.gateway_env.clone(),
            worker_env: spec.worker_env.clone(),
            starts: 0,
            scratch,
        };
        for index in 0..spec.gateways {
            let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
            let process = cluster.spawn_gateway(index, addr);
            cluster.gateways.push(GatewayNode { addr, process });
        }
        for index in 0..spec.workers {
            let process = cluster.spawn_worker(index);
            cluster.workers.push(process);
        }
        for index in 0..spec.gateways {
            cluster.wait_gateway_ready(index).await;
        }
        if spec.workers > 0 {
            cluster.wait_workers_ready().await;
        }
        cluster
    }

    fn node_command(&self, binary_name: &str, node_id: &str, env: &[(String, String)]) -> Command {
        let mut command = Command::new(binary(binary_name));
        command
            .env("IRIS_REDIS_URL", self.redis_url())
            .env("IRIS_PARTITIONS", self.partitions.to_string())
            .env("IRIS_NODE_ID", node_id)
            .env("RUST_LOG", NODE_LOG_FILTER)
            .env("NO_COLOR", "1")
            .envs(env.iter().map(|(name, value)| (name, value)));
        command
    }

    /// The log name of a node's process: its node id, then the restart count if restarted.
    fn process_name(&mut self, node_id: &str) -> String {
        self.starts += 1;
        let earlier = self
            .gateways
            .iter()
            .map(|g| g.process.name())
            .chain(self.workers.iter().map(ChildProcess::name))
            .any(|name| name == node_id);
        if earlier {
            format!("{node_id}.{}", self.starts)
        } else {
            node_id.to_owned()
        }
    }

    fn spawn_gateway(&mut self, index: usize, addr: SocketAddr) -> ChildProcess {
        let node_id = gateway_node_id(index);
        let name = self.process_name(&node_id);
        let mut command = self.node_command(GATEWAY, &node_id, &self.gateway_env);
        command.arg("serve").env("IRIS_LISTEN", addr.to_string());
        ChildProcess::spawn(&name, command, self.scratch.path())
    }

    fn spawn_worker(&mut self, index: usize) -> ChildProcess {
        let node_id = worker_node_id(index);
        let name = self.process_name(&node_id);
        let mut command = self.node_command(WORKER, &node_id, &self.worker_env);
        if self.worker_http.len() <= index {
            self.worker_http
                .push(SocketAddr::from(([127, 0, 0, 1], free_port())));
        }
        command.env("IRIS_METRICS_LISTEN", self.worker_http[index].to_string());
        ChildProcess::spawn(&name, command, self.scratch.path())
    }

    /// Address of worker `index`'s `/healthz`, `/readyz` and `/metrics`.
    pub fn worker_http_addr(&self, index: usize) -> SocketAddr {
        self.worker_http[index]
    }

    /// Number of gateways.
    pub fn gateway_count(&self) -> usize {
        self.gateways.len()
    }

    /// Number of workers.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Whether gateway `index`'s process has ended.
    pub fn gateway_exited(&mut self, index: usize) -> bool {
        self.gateways[index].process.exit_status().is_some()
    }

    /// Crashes gateway `index` (SIGKILL: its sessions just break).
    pub fn kill_gateway(&mut self, index: usize) {
        self.gateways[index].process.kill();
    }

    /// Starts gateway `index` again on its old address (after a kill or a drain) and waits
    /// until it is ready.
    pub async fn restart_gateway(&mut self, index: usize) {
        self.gateways[index].process.kill();
        let addr = self.gateways[index].addr;
        self.gateways[index].process = self.spawn_gateway(index, addr);
        self.wait_gateway_ready(index).await;
    }

    /// Starts worker `index` again (after a kill or a drain).
    pub fn restart_worker(&mut self, index: usize) {
        self.workers[index].kill();
        self.workers[index] = self.spawn_worker(index);
    }

    /// Starts one more worker and waits until the workers serve every partition.
    pub async fn add_worker(&mut self) {
        binary(WORKER);
        let index = self.workers.len();
        let process = self.spawn_worker(index);
        self.workers.push(process);
        self.wait_workers_ready().await;
    }

    /// Waits until every worker is registered and every partition has a lease holder.
    pub async fn wait_workers_serving(&mut self) {
        self.wait_workers_ready().await;
    }

    async fn wait_gateway_ready(&mut self, index: usize) {
        let addr = self.gateways[index].addr;
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(response) = http_probe::get(addr, "/readyz").await {
                if response.status == 200 {
                    return;
                }
            }
            if self.gateways[index].process.exit_status().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "gateway {} never answered /readyz 200",
            gateway_node_id(index)
        );
    }

    async fn wait_workers_ready(&mut self) {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if self.unready_worker_reason().is_none() {
                return;
            }
            if let Some(dead) = self.workers.iter_mut().find_map(|w| {
                w.exit_status()
                    .map(|status| format!("{} {status}", w.name()))
            }) {
                panic!("worker exited during startup: {dead}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let reason = self.unready_worker_reason().unwrap_or_default();
        panic!("workers not ready within {STARTUP_TIMEOUT:?}: {reason}");
    }

    /// Why the workers are not serving every partition yet, if they are not.
    fn unready_worker_reason(&self) -> Option<String> {
        let registry = iris_shared::keys::workers();
        for index in 0..self.workers.len() {
            let node_id = worker_node_id(index);
            match self.redis_command(&["ZSCORE", &registry, &node_id]) {
                Ok(Reply::Text(_)) => {}
                other => return Some(format!("{node_id} not in {registry} ({other:?})")),
            }
        }
        (0..self.partitions)
            .find(|&partition| self.lease_holder(partition).is_none())
            .map(|partition| format!("partition {partition} has no lease holder"))
    }

    /// Address of gateway `index`.
    pub fn gateway_addr(&self, index: usize) -> SocketAddr {
        self.gateways[index].addr
    }

    /// A WebSocket connection to gateway `index`; `label` names the device in failures.
    pub async fn connect(&self, index: usize, label: &str) -> Client {
        Client::connect(self.gateway_addr(index), label).await
    }

    /// The cluster's Redis (with Sentinel: the current master). A Redis Cluster has no
    /// one server: use [`Cluster::redis_command`] or [`Cluster::redis_cluster`].
    pub fn redis(&self) -> &RedisServer {
        match &self.redis {
            Backing::Single(server) => server,
            Backing::Sentinel(group) => group.master(),
            Backing::Cluster(_) => panic!(
                "this cluster runs on a Redis Cluster, which has no one server: \
                 use redis_command or redis_cluster"
            ),
        }
    }

    /// Runs one command on the cluster's Redis (with Sentinel: the current master; with
    /// a Redis Cluster: the node owning the key, following redirects).
    pub fn redis_command(&self, args: &[&str]) -> std::io::Result<Reply> {
        match &self.redis {
            Backing::Cluster(cluster) => cluster.command(args),
            _ => self.redis().command(args),
        }
    }

    /// The `IRIS_REDIS_URL` every node is given.
    pub fn redis_url(&self) -> String {
        match &self.redis {
            Backing::Single(server) => server.url(),
            Backing::Sentinel(group) => group.url(),
            Backing::Cluster(cluster) => cluster.url(),
        }
    }

    /// The Sentinel-managed Redis, if the cluster runs on one.
    pub fn sentinels(&self) -> Option<&SentinelGroup> {
        match &self.redis {
            Backing::Sentinel(group) => Some(group),
            _ => None,
        }
    }

    /// The Redis Cluster, if the cluster runs on one.
    pub fn redis_cluster(&self) -> Option<&RedisCluster> {
        match &self.redis {
            Backing::Cluster(cluster) => Some(cluster),
            _ => None,
        }
    }

    /// The Redis Cluster, if the cluster runs on one, to kill masters and restart nodes.
    pub fn redis_cluster_mut(&mut self) -> Option<&mut RedisCluster> {
        match &mut self.redis {
            Backing::Cluster(cluster) => Some(cluster),
            _ => None,
        }
    }

    fn single_redis(&mut self) -> &mut RedisServer {
        match &mut self.redis {
            Backing::Single(server) => server,
            Backing::Sentinel(_) => panic!("this cluster's Redis is Sentinel-managed"),
            Backing::Cluster(_) => {
                panic!("this cluster's Redis is a Redis Cluster: use redis_cluster_mut")
            }
        }
    }

    /// `IRIS_PARTITIONS` of the cluster.
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// Runs `iris-gateway token <args>` against the cluster's Redis; returns stdout.
    fn token_command(&self, args: &[&str]) -> String {
        let output = Command::new(binary(GATEWAY))
            .arg("token")
            .args(args)
            .env("IRIS_REDIS_URL", self.redis_url())
            .env("RUST_LOG", "warn")
            .output()
            .expect("running iris-gateway token");
        assert!(
            output.status.success(),
            "iris-gateway token {args:?} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Creates a device token for `account` (`iris-gateway token create`).
    pub fn create_token(&self, account: &str) -> String {
        let stdout = self.token_command(&["create", "--account", account]);
        stdout
            .lines()
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .unwrap_or_else(|| panic!("token create printed no token: {stdout:?}"))
            .to_owned()
    }

    /// Revokes `token` (`iris-gateway token revoke`).
    pub fn revoke_token(&self, token: &str) {
        self.token_command(&["revoke", token]);
    }

    /// Crashes worker `index` (SIGKILL: no cleanup, its leases just expire).
    pub fn kill_worker(&mut self, index: usize) {
        self.workers[index].kill();
    }

    /// Asks worker `index` to shut down in order (SIGTERM: it drains and releases).
    pub fn terminate_worker(&mut self, index: usize) {
        self.workers[index].terminate();
    }

    /// Freezes worker `index` (SIGSTOP): it holds its connections but does nothing.
    pub fn pause_worker(&mut self, index: usize) {
        self.workers[index].signal("STOP");
    }

    /// Lets a frozen worker `index` go on (SIGCONT).
    pub fn resume_worker(&mut self, index: usize) {
        self.workers[index].signal("CONT");
    }

    /// Whether worker `index` has exited.
    pub fn worker_exited(&mut self, index: usize) -> bool {
        self.workers[index].exit_status().is_some()
    }

    /// Worker `index`'s log so far.
    pub fn worker_log(&self, index: usize) -> String {
        self.workers[index].log_text()
    }

    /// Asks gateway `index` to shut down in order (SIGTERM: it drains its sessions).
    pub fn terminate_gateway(&mut self, index: usize) {
        self.gateways[index].process.terminate();
    }

    /// The OS process id of gateway `index`.
    pub fn gateway_pid(&self, index: usize) -> u32 {
        self.gateways[index].process.pid()
    }

    /// Resident memory of gateway `index` (KiB).
    pub fn gateway_rss_kib(&self, index: usize) -> u64 {
        self.gateways[index].process.rss_kib()
    }

    /// The value of series `iris_gateway_<name>` on gateway `index`'s `/metrics`.
    pub async fn gateway_metric(&self, index: usize, name: &str) -> i64 {
        let text = self.gateway_metrics_text(index).await;
        series_value(&text, &format!("iris_gateway_{name}"))
    }

    /// The value of series `iris_worker_<name>` on worker `index`'s `/metrics`.
    pub async fn worker_metric(&self, index: usize, name: &str) -> i64 {
        let text = self.worker_metrics_text(index).await;
        series_value(&text, &format!("iris_worker_{name}"))
    }

    /// Address of gateway `index`'s `/metrics`.
    pub fn gateway_metrics_addr(&self, index: usize) -> SocketAddr {
        self.gateway_addr(index)
    }

    /// Gateway `index`'s whole `/metrics` text.
    pub async fn gateway_metrics_text(&self, index: usize) -> String {
        let response = http_probe::get(self.gateway_metrics_addr(index), "/metrics")
            .await
            .expect("GET /metrics on a gateway");
        response.body
    }

    /// Worker `index`'s whole `/metrics` text.
    pub async fn worker_metrics_text(&self, index: usize) -> String {
        let response = http_probe::get(self.worker_http_addr(index), "/metrics")
            .await
            .expect("GET /metrics on a worker");
        response.body
    }

    /// Crashes the cluster's Redis (SIGKILL).
    pub fn kill_redis(&mut self) {
        self.single_redis().kill();
    }

    /// Starts the cluster's Redis again on the same port and data directory.
    pub fn restart_redis(&mut self) {
        self.single_redis().restart();
    }

    /// Freezes the cluster's Redis (SIGSTOP): it holds connections and answers nothing.
    pub fn freeze_redis(&mut self) {
        self.single_redis().freeze();
    }

    /// Lets the frozen Redis run again (SIGCONT).
    pub fn thaw_redis(&mut self) {
        self.single_redis().thaw();
    }

    fn diagnostics(&mut self) -> String {
        let mut report = vec![format!("cluster logs in {}", self.scratch.path().display())];
        match &mut self.redis {
            Backing::Single(server) => {
                report.push(server.process_mut().diagnostics(LOG_LINES_ON_FAILURE));
            }
            Backing::Cluster(cluster) => report.push(cluster.diagnostics(LOG_LINES_ON_FAILURE)),
            Backing::Sentinel(_) => {}
        }
        for gateway in &mut self.gateways {
            report.push(gateway.process.diagnostics(LOG_LINES_ON_FAILURE));
        }
        for worker in &mut self.workers {
            report.push(worker.diagnostics(LOG_LINES_ON_FAILURE));
        }
        report.join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.diagnostics());
        }
    }
}

/// The value of the series written exactly `series` (name and labels) in Prometheus text.
pub fn series_value(text: &str, series: &str) -> i64 {
    let prefix = format!("{series} ");
    text.lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map(|value| value as i64)
        .unwrap_or_else(|| panic!("no series {series} in /metrics:\n{text}"))
}
