//! The command line: which scenario to run, the cluster to run it on (spawned or existing)
//! and each scenario's knobs. Knobs left unset take the scenario's own default, so `all`
//! runs every scenario at its documented size.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Load generator for Iris Cluster (docs/performance.md, "Benchmarks").
#[derive(Debug, Clone, Parser)]
#[command(name = "iris-bench", version)]
pub struct Options {
    /// The scenario to run (`all` runs each in turn, one cluster per scenario).
    #[arg(value_enum)]
    pub scenario: ScenarioName,

    /// Gateways to spawn.
    #[arg(long, env = "IRIS_BENCH_GATEWAYS", default_value_t = 2)]
    pub gateways: usize,
    /// Workers to spawn (`takeover` always spawns 2).
    #[arg(long, env = "IRIS_BENCH_WORKERS", default_value_t = 1)]
    pub workers: usize,
    /// Directory holding the `iris-gateway` and `iris-worker` binaries to spawn.
    #[arg(long, env = "IRIS_BENCH_BIN_DIR", default_value = "target/release")]
    pub bin_dir: PathBuf,
    /// `IRIS_PARTITIONS` of the spawned nodes (also used to find a chat's partition).
    #[arg(long, env = "IRIS_PARTITIONS", default_value_t = 64)]
    pub partitions: u32,
    /// `RUST_LOG` of the spawned nodes.
    #[arg(long, env = "IRIS_BENCH_NODE_LOG", default_value = "warn")]
    pub node_log: String,
    /// Run the spawned nodes on a private Redis Cluster of this many masters (slots split
    /// evenly) instead of one Redis server; the report then shows each master's commands/s
    /// and CPU and their spread (busiest ÷ mean).
    #[arg(long, env = "IRIS_BENCH_REDIS_CLUSTER", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub redis_cluster: Option<u16>,
    /// Replicas per master of `--redis-cluster`. Default 0, for benches on a small machine
    /// (a few cores): each replica is one more redis-server replaying every write on the
    /// same CPUs as the masters being measured.
    #[arg(long, env = "IRIS_BENCH_REDIS_REPLICAS", default_value_t = 0)]
    pub redis_replicas: u16,

    /// An existing gateway, `http://host:port` (repeatable); with it nothing is spawned.
    #[arg(long = "gateway", env = "IRIS_BENCH_GATEWAY", value_delimiter = ',')]
    pub existing_gateways: Vec<String>,
    /// The existing gateways' `IRIS_INTERNAL_LISTEN` addresses, `http://host:port`, in the
    /// order of `--gateway`: where `/metrics` and the server API are asked for when the
    /// gateways serve them off their public port.
    #[arg(
        long = "gateway-internal",
        env = "IRIS_BENCH_GATEWAY_INTERNAL",
        value_delimiter = ','
    )]
    pub existing_gateway_internals: Vec<String>,
    /// An existing worker's metrics endpoint, `http://host:port` (repeatable).
    #[arg(
        long = "worker-metrics",
        env = "IRIS_BENCH_WORKER_METRICS",
        value_delimiter = ','
    )]
    pub existing_worker_metrics: Vec<String>,
    /// The existing cluster's Redis (`redis://...`, `redis+sentinel://...` or
    /// `redis+cluster://host:port,...`), for INFO (every master's, on a Cluster) and outbox
    /// checks.
    #[arg(long = "redis", env = "IRIS_BENCH_REDIS", hide_env_values = true)]
    pub existing_redis: Option<String>,
    /// The server API key (`IRIS_ADMIN_KEY`); spawned gateways get this one.
    #[arg(
        long,
        env = "IRIS_ADMIN_KEY",
        default_value = "iris-bench-admin-key",
        hide_env_values = true
    )]
    pub admin_key: String,

    /// Connections (idle: default 19000 on one gateway; reconnect-storm: default 2000).
    #[arg(long, env = "IRIS_BENCH_CONNECTIONS")]
    pub connections: Option<usize>,
    /// Seconds the idle connections are held.
    #[arg(long, env = "IRIS_BENCH_HOLD", default_value_t = 10)]
    pub hold: u64,
    /// Accounts (chat: default 50; busy: 200; fanout: default 100).
    #[arg(long, env = "IRIS_BENCH_ACCOUNTS")]
    pub accounts: Option<usize>,
    /// Devices per account (chat, idle, reconnect-storm: default 2; fanout: default 5).
    #[arg(long, env = "IRIS_BENCH_DEVICES")]
    pub devices: Option<usize>,
    /// Rate: chat `message.send`s per second per account (default 1); fanout and
    /// reconnect-storm publishes per second in total (default 1000 and 200).
    #[arg(long, env = "IRIS_BENCH_RATE")]
    pub rate: Option<f64>,
    /// Seconds of load (chat, fanout; reconnect-storm's publishing before the drop).
    #[arg(long, env = "IRIS_BENCH_DURATION", default_value_t = 10)]
    pub duration: u64,
    /// Frames published while the device is away (replay).
    #[arg(long, env = "IRIS_BENCH_FRAMES", default_value_t = 10_000)]
    pub frames: usize,
    /// Repetitions (replay, takeover).
    #[arg(long, env = "IRIS_BENCH_REPEATS", default_value_t = 3)]
    pub repeats: usize,
    /// Pause between the echo agent's chunks in spawned workers (`IRIS_ECHO_DELAY_MS`), so
    /// turns take time like a real agent's and chat messages arrive while they run (a chat
    /// turn streams 3 chunks or more; 0 answers at once). Default 0, busy 520 (turns of 1.5 s
    /// or more; `extra.turn_min_ms` shows the shortest).
    #[arg(long, env = "IRIS_BENCH_AGENT_DELAY_MS")]
    pub agent_delay_ms: Option<u64>,
    /// `IRIS_LEASE_TTL_MS` given to the workers of the takeover's spawned clusters.
    #[arg(long, env = "IRIS_LEASE_TTL_MS", default_value_t = 2000)]
    pub lease_ttl_ms: u64,
    /// Connections being opened at once.
    #[arg(long, env = "IRIS_BENCH_CONNECT_CONCURRENCY", default_value_t = 200)]
    pub connect_concurrency: usize,
    /// Server API requests in flight at once (tokens, publishes).
    #[arg(long, env = "IRIS_BENCH_API_CONCURRENCY", default_value_t = 64)]
    pub api_concurrency: usize,

    /// Also write the results as JSON to this file.
    #[arg(long, env = "IRIS_BENCH_JSON")]
    pub json: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long, env = "IRIS_BENCH_QUIET")]
    pub quiet: bool,
}

/// A scenario name on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScenarioName {
    Idle,
    Chat,
    Busy,
    Fanout,
    ReconnectStorm,
    Replay,
    Takeover,
    All,
}

impl ScenarioName {
    /// The scenarios `self` stands for, in the order `all` runs them.
    pub fn expand(self) -> Vec<ScenarioName> {
        match self {
            Self::All => vec![
                Self::Idle,
                Self::Chat,
                Self::Busy,
                Self::Fanout,
                Self::ReconnectStorm,
                Self::Replay,
                Self::Takeover,
            ],
            one => vec![one],
        }
    }

    /// The name used in reports.
    pub fn label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Chat => "chat",
            Self::Busy => "busy",
            Self::Fanout => "fanout",
            Self::ReconnectStorm => "reconnect-storm",
            Self::Replay => "replay",
            Self::Takeover => "takeover",
            Self::All => "all",
        }
    }
}

/// The echo agent's pause between chunks in `busy`: its turns of 3 chunks or more take
/// 1.5 s or more.
pub const BUSY_AGENT_DELAY_MS: u64 = 520;

impl Options {
    /// The echo agent's pause between chunks for `scenario`.
    pub fn agent_delay_ms(&self, scenario: ScenarioName) -> u64 {
        let default = if scenario == ScenarioName::Busy {
            BUSY_AGENT_DELAY_MS
        } else {
            0
        };
        self.agent_delay_ms.unwrap_or(default)
    }

    /// Whether the cluster is an existing one (nothing spawned).
    pub fn existing_cluster(&self) -> bool {
        !self.existing_gateways.is_empty()
    }
}
