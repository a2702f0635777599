//! The cluster a scenario runs on. Spawned: a private `redis-server` on a free port with
//! its own directory (or a private Redis Cluster, `--redis-cluster`), N gateways and M
//! workers from `--bin-dir`, every node on free ports, logging into a run directory; or
//! an existing cluster given by URLs. Either way
//! the scenarios see the same thing: gateway addresses, worker metrics endpoints, Redis.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::metrics_scrape::MetricsPage;
use crate::node_process::NodeProcess;
use crate::options::Options;
use crate::redis_server::{free_port, SpawnedRedis};

/// How long spawned nodes may take to become ready.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// `hello` and WebSocket upgrade attempts per second and burst per client address given to
/// spawned gateways: every benchmark device connects from the same host.
const PER_ADDRESS_LIMIT: &str = "1000000";

/// What to spawn.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub gateways: usize,
    pub workers: usize,
    /// Extra environment of every worker.
    pub worker_env: Vec<(&'static str, String)>,
}

/// One gateway as the bench reaches it.
#[derive(Debug, Clone)]
pub struct Gateway {
    /// `http://host:port` of the server API and `/metrics` (the internal listener's, when
    /// the gateway has one).
    pub http: String,
    /// `ws://host:port/ws`.
    pub ws_url: String,
    /// The address connections are opened to.
    pub addr: SocketAddr,
}

/// The processes of a spawned cluster; all are killed when it drops.
struct Spawned {
    run_dir: PathBuf,
    redis: Vec<NodeProcess>,
    gateways: Vec<NodeProcess>,
    workers: Vec<Option<NodeProcess>>,
    keep_run_dir: bool,
}

/// The cluster under test.
pub struct Cluster {
    pub gateways: Vec<Gateway>,
    /// Each worker's `http://host:port` serving `/metrics`.
    pub worker_metrics: Vec<String>,
    /// Node id of each spawned worker (empty for an existing cluster).
    pub worker_node_ids: Vec<String>,
    pub redis_url: Option<String>,
    pub admin_key: String,
    pub partitions: u32,
    spawned: Option<Spawned>,
}

impl Cluster {
    /// The cluster of `options`: the existing one it names, or a new one of `spec`.
    pub async fn prepare(options: &Options, spec: SpawnSpec) -> Result<Self> {
        if options.existing_cluster() {
            return Self::existing(options);
        }
        let cluster = Self::spawn(options, spec)?;
        cluster.wait_ready().await?;
        Ok(cluster)
    }

    fn existing(options: &Options) -> Result<Self> {
        if options.redis_cluster.is_some() {
            bail!("--redis-cluster spawns a Redis Cluster, and --gateway spawns nothing: for an existing cluster pass --redis redis+cluster://host:port,...");
        }
        let internals = &options.existing_gateway_internals;
        if !internals.is_empty() && internals.len() != options.existing_gateways.len() {
            bail!(
                "--gateway-internal names {} addresses for {} --gateway: give one per gateway, in the same order",
                internals.len(),
                options.existing_gateways.len()
            );
        }
        let gateways = options
            .existing_gateways
            .iter()
            .enumerate()
            .map(|(index, url)| {
                let mut gateway = gateway_at(url)?;
                if let Some(internal) = internals.get(index) {
                    gateway.http = internal.trim_end_matches('/').to_owned();
                }
                Ok(gateway)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            gateways,
            worker_metrics: options
                .existing_worker_metrics
                .iter()
                .map(|url| url.trim_end_matches('/').to_owned())
                .collect(),
            worker_node_ids: Vec::new(),
            redis_url: options.existing_redis.clone(),
            admin_key: options.admin_key.clone(),
            partitions: options.partitions,
            spawned: None,
        })
    }

    fn spawn(options: &Options, spec: SpawnSpec) -> Result<Self> {
        let gateway_bin = binary(&options.bin_dir, "iris-gateway")?;
        let worker_bin = binary(&options.bin_dir, "iris-worker")?;
        let run_dir = run_directory()?;
        let SpawnedRedis {
            processes: redis,
            url: redis_url,
        } = SpawnedRedis::start(options, &run_dir)?;
        let common_env = |command: &mut Command, node_id: &str| {
            command
                .env("IRIS_REDIS_URL", &redis_url)
                .env("IRIS_PARTITIONS", options.partitions.to_string())
                .env("IRIS_NODE_ID", node_id)
                .env("RUST_LOG", &options.node_log)
                .env("NO_COLOR", "1");
        };
        let mut gateways = Vec::new();
        let mut gateway_processes = Vec::new();
        for index in 0..spec.gateways {
            let port = free_port()?;
            let node_id = format!("bench-gw-{}", index + 1);
            let mut command = Command::new(&gateway_bin);
            command.arg("serve");
            common_env(&mut command, &node_id);
            command
                .env("IRIS_LISTEN", format!("127.0.0.1:{port}"))
                .env("IRIS_ADMIN_KEY", &options.admin_key)
                .env("IRIS_HELLO_RATE", PER_ADDRESS_LIMIT)
                .env("IRIS_HELLO_BURST", PER_ADDRESS_LIMIT)
                .env("IRIS_UPGRADE_RATE", PER_ADDRESS_LIMIT)
                .env("IRIS_UPGRADE_BURST", PER_ADDRESS_LIMIT);
            gateway_processes.push(NodeProcess::spawn(&node_id, command, &run_dir)?);
            gateways.push(gateway_at(&format!("http://127.0.0.1:{port}"))?);
        }
        let mut worker_metrics = Vec::new();
        let mut worker_node_ids = Vec::new();
        let mut workers = Vec::new();
        for index in 0..spec.workers {
            let port = free_port()?;
            let node_id = format!("bench-worker-{}", index + 1);
            let mut command = Command::new(&worker_bin);
            common_env(&mut command, &node_id);
            command
                .env("IRIS_METRICS_LISTEN", format!("127.0.0.1:{port}"))
                .env("IRIS_ECHO_DELAY_MS", "0")
                .envs(spec.worker_env.iter().map(|(k, v)| (*k, v)));
            workers.push(Some(NodeProcess::spawn(&node_id, command, &run_dir)?));
            worker_metrics.push(format!("http://127.0.0.1:{port}"));
            worker_node_ids.push(node_id);
        }
        if !options.quiet {
            eprintln!("cluster logs in {}", run_dir.display());
            if options.redis_cluster.is_some() {
                eprintln!("Redis: {}", iris_shared::redact::url(&redis_url));
            }
        }
        Ok(Self {
            gateways,
            worker_metrics,
            worker_node_ids,
            redis_url: Some(redis_url),
            admin_key: options.admin_key.clone(),
            partitions: options.partitions,
            spawned: Some(Spawned {
                run_dir,
                redis,
                gateways: gateway_processes,
                workers,
                keep_run_dir: true,
            }),
        })
    }

    /// Waits until every gateway and worker answers `/readyz` 200 and the workers hold
    /// every partition between them.
    async fn wait_ready(&self) -> Result<()> {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            let mut unready = None;
            let gateways = self.gateways.iter().map(|g| ("gateway", &g.http));
            let workers = self.worker_metrics.iter().map(|w| ("worker", w));
            for (kind, base) in gateways.chain(workers) {
                if !ready(&http, base).await {
                    unready = Some(format!("{kind} {base}/readyz is not 200"));
                    break;
                }
            }
            if unready.is_none() && !self.worker_metrics.is_empty() {
                let owned = self.partitions_owned(&http).await;
                let total: f64 = owned.iter().flatten().sum();
                if total < f64::from(self.partitions) {
                    unready = Some(format!(
                        "workers own {total} of {} partitions",
                        self.partitions
                    ));
                }
            }
            let Some(reason) = unready else { return Ok(()) };
            self.check_alive()?;
            if Instant::now() > deadline {
                bail!("cluster not ready within {STARTUP_TIMEOUT:?}: {reason}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Each worker's `iris_worker_partitions_owned` (`None` where it does not answer).
    pub async fn partitions_owned(&self, http: &reqwest::Client) -> Vec<Option<f64>> {
        let mut owned = Vec::new();
        for base in &self.worker_metrics {
            let page = MetricsPage::fetch(http, base).await.ok();
            owned.push(page.and_then(|p| p.value("iris_worker_partitions_owned")));
        }
        owned
    }

    /// Fails with the log's end if a spawned process has exited.
    pub fn check_alive(&self) -> Result<()> {
        let Some(spawned) = &self.spawned else {
            return Ok(());
        };
        // `exited` needs `&mut`; a process that died shows in its log, so read it there.
        let processes = spawned
            .redis
            .iter()
            .chain(&spawned.gateways)
            .chain(spawned.workers.iter().flatten());
        for process in processes {
            if process_gone(process) {
                bail!("{} exited\n{}", process.name(), process.log_tail(30));
            }
        }
        Ok(())
    }

    /// SIGKILLs spawned worker `index`.
    pub fn kill_worker(&mut self, index: usize) -> Result<()> {
        let Some(spawned) = &mut self.spawned else {
            bail!("killing a worker needs a spawned cluster");
        };
        match spawned.workers.get_mut(index).and_then(Option::take) {
            Some(mut process) => {
                process.kill();
                Ok(())
            }
            None => bail!("no running worker {index}"),
        }
    }

    /// The run directory is removed when the cluster drops (the scenario went well).
    pub fn discard_logs(&mut self) {
        if let Some(spawned) = &mut self.spawned {
            spawned.keep_run_dir = false;
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        for worker in self.workers.iter_mut().flatten() {
            worker.kill();
        }
        for gateway in &mut self.gateways {
            gateway.kill();
        }
        for redis in &mut self.redis {
            redis.kill();
        }
        if self.keep_run_dir {
            eprintln!("cluster logs kept in {}", self.run_dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.run_dir);
        }
    }
}

/// Whether the process behind `process` has ended (its `/proc` entry is gone or a zombie).
fn process_gone(process: &NodeProcess) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{}/stat", process.pid()));
    match status {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

async fn ready(http: &reqwest::Client, base: &str) -> bool {
    let response = http
        .get(format!("{base}/readyz"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    response.is_ok_and(|r| r.status().is_success())
}

/// A gateway given as `http://host:port`.
fn gateway_at(url: &str) -> Result<Gateway> {
    let http = url.trim_end_matches('/').to_owned();
    let host_port = http
        .strip_prefix("http://")
        .with_context(|| format!("gateway {url}: expected http://host:port"))?;
    let addr = host_port
        .to_socket_addrs()
        .with_context(|| format!("resolving {host_port}"))?
        .next()
        .with_context(|| format!("{host_port} resolves to nothing"))?;
    Ok(Gateway {
        ws_url: format!("ws://{host_port}/ws"),
        http,
        addr,
    })
}

/// `dir/name`, or an error saying how to build it.
fn binary(dir: &Path, name: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    if !path.is_file() {
        bail!(
            "{} is missing: run cargo build --release -p iris-gateway -p iris-worker \
             (or pass --bin-dir)",
            path.display()
        );
    }
    Ok(path)
}

/// A fresh directory for one run's logs and Redis files.
fn run_directory() -> Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("iris-bench-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}
