//! Settings both node kinds share. Every setting is a command-line flag with an
//! environment variable behind it, so `--help` lists them all.

use clap::Args;

use crate::telemetry::LogFormat;

/// Settings common to `iris-gateway` and `iris-worker`.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Redis holding the cluster's state (streams, outboxes, leases, tokens).
    #[arg(
        long,
        global = true,
        env = "IRIS_REDIS_URL",
        hide_env_values = true,
        default_value = "redis://127.0.0.1:6379"
    )]
    pub redis_url: String,

    /// Number of inbound partitions; must be the same on every node of the cluster.
    #[arg(long, global = true, env = "IRIS_PARTITIONS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub partitions: u32,

    /// Stable name of this node (defaults to a random one per process).
    #[arg(long, global = true, env = "IRIS_NODE_ID", value_parser = parse_node_id)]
    pub node_id: Option<String>,

    /// How log lines are written to stderr: `text` (human-readable) or `json` (one object per
    /// line, with `trace_id` inside traced spans).
    #[arg(long, global = true, env = "IRIS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// A node id names the node in presence, which ends it at a newline.
fn parse_node_id(value: &str) -> Result<String, String> {
    if crate::presence::is_valid_node_id(value) {
        Ok(value.to_owned())
    } else {
        Err("a node id must be non-empty and hold no line break".to_owned())
    }
}

impl ClusterArgs {
    /// The node id to use: the configured one, or `<kind>-<random hex>`.
    pub fn node_id_or_random(&self, kind: &str) -> String {
        self.node_id
            .clone()
            .unwrap_or_else(|| format!("{kind}-{:08x}", rand::random::<u32>()))
    }
}
