//! The worker's own settings (beyond the cluster-wide ones in `iris_shared::config`).

use std::time::Duration;

use clap::{Args, ValueEnum};

use iris_shared::redact::Secret;

use crate::chat::BusyPolicy;

/// Which upstream agent runs the turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentKind {
    /// Built-in agent that streams the user's text back; needs no LLM.
    Echo,
    /// A Hermes API server.
    Hermes,
    /// Any OpenAI-compatible `/v1/chat/completions` endpoint.
    Openai,
}

/// Worker settings.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Upstream agent.
    #[arg(long, env = "IRIS_AGENT", value_enum, default_value = "echo")]
    pub agent: AgentKind,

    /// Base URL of the upstream agent (hermes, openai).
    #[arg(long, env = "IRIS_AGENT_URL", hide_env_values = true)]
    pub agent_url: Option<String>,

    /// API key for the upstream agent.
    #[arg(long, env = "IRIS_AGENT_API_KEY", hide_env_values = true)]
    pub agent_api_key: Option<Secret>,

    /// Model to ask the upstream agent for.
    #[arg(long, env = "IRIS_AGENT_MODEL")]
    pub agent_model: Option<String>,

    /// Address of the worker's HTTP endpoint: `/healthz`, `/readyz` and `/metrics`.
    #[arg(long, env = "IRIS_METRICS_LISTEN", default_value = "0.0.0.0:9090")]
    pub metrics_listen: String,

    /// Pause between the echo agent's streamed chunks (ms).
    #[arg(long, env = "IRIS_ECHO_DELAY_MS", default_value_t = 40)]
    pub echo_delay_ms: u64,

    /// Partition lease lifetime (ms); a dead worker's partitions move after about this long.
    #[arg(long, env = "IRIS_LEASE_TTL_MS", default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(500..))]
    pub lease_ttl_ms: u64,

    /// On SIGTERM, how long running turns may take to finish before they are handed to
    /// another worker (ms); keep it below the orchestrator's kill deadline (Kubernetes
    /// `terminationGracePeriodSeconds`, 30 s by default).
    #[arg(long, env = "IRIS_DRAIN_GRACE_MS", default_value_t = 10_000)]
    pub drain_grace_ms: u64,

    /// Where uploaded media is stored (the gateways' `IRIS_MEDIA_STORE`): `file:///dir` or
    /// `s3://bucket/prefix`; images attached to messages are read from it for the agent.
    #[arg(long, env = "IRIS_MEDIA_STORE")]
    pub media_store: Option<String>,

    /// What a message sent while the chat's agent is busy does, for chats that chose
    /// nothing with `/busy`: `queue` (answered in order), `interrupt` (stops the running
    /// turn) or `steer` (steers it where the agent can, else queued).
    #[arg(long, env = "IRIS_BUSY_POLICY", value_enum, default_value = "queue")]
    pub busy_policy: BusyPolicy,

    /// A chat actor with no work for this long stops (s).
    #[arg(long, env = "IRIS_CHAT_IDLE_SECS", default_value_t = 60)]
    pub chat_idle_secs: u64,

    /// ntfy server to push offline devices through, e.g. `https://ntfy.sh` (see docs/push.md).
    #[arg(long, env = "IRIS_NTFY_URL", hide_env_values = true)]
    pub ntfy_url: Option<String>,

    /// Access token for the ntfy server (sent as `Authorization: Bearer`).
    #[arg(long, env = "IRIS_NTFY_TOKEN", hide_env_values = true)]
    pub ntfy_token: Option<Secret>,

    /// Google service-account JSON (`project_id`, `client_email`, `private_key`, `token_uri`)
    /// to push offline devices through FCM HTTP v1.
    #[arg(long, env = "IRIS_FCM_CREDENTIALS")]
    pub fcm_credentials: Option<std::path::PathBuf>,

    /// OAuth token endpoint to use instead of the credentials' `token_uri`.
    #[arg(long, env = "IRIS_FCM_TOKEN_URL")]
    pub fcm_token_url: Option<String>,

    /// Base URL of the FCM API.
    #[arg(
        long,
        env = "IRIS_FCM_ENDPOINT",
        default_value = "https://fcm.googleapis.com"
    )]
    pub fcm_endpoint: String,

    /// Least time between two pushes to one device (ms); pushes inside the window are merged
    /// into one sent when it ends.
    #[arg(long, env = "IRIS_PUSH_MIN_INTERVAL_MS", default_value_t = 1_000)]
    pub push_min_interval_ms: u64,
}

impl WorkerArgs {
    /// The agent kind as configured (`echo`, `hermes`, `openai`).
    pub fn agent_name(&self) -> String {
        format!("{:?}", self.agent).to_lowercase()
    }

    /// Lease lifetime.
    pub fn lease_ttl(&self) -> Duration {
        Duration::from_millis(self.lease_ttl_ms)
    }

    /// How long a drain waits for running turns.
    pub fn drain_grace(&self) -> Duration {
        Duration::from_millis(self.drain_grace_ms)
    }
}
