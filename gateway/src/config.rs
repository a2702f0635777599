//! The gateway's own settings (beyond the cluster-wide ones in `iris_shared::config`).

use std::time::Duration;

use clap::Args;

use crate::send_queue::SendQueueLimits;
use iris_shared::protocol::limits::{
    InputLimits, DEFAULT_MAX_ID_BYTES, DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_QUERY_BYTES,
    DEFAULT_MAX_TEXT_BYTES, DEFAULT_MAX_TITLE_BYTES, DEFAULT_MAX_TOKEN_BYTES,
};
use iris_shared::redact::Secret;

/// Settings of the `serve` mode.
#[derive(Debug, Clone, Args)]
pub struct GatewayArgs {
    /// Address the HTTP/WebSocket listener binds.
    #[arg(
        long,
        global = true,
        env = "IRIS_LISTEN",
        default_value = "0.0.0.0:8080"
    )]
    pub listen: String,

    /// Address of a second listener for `/metrics` and the server API (`/api/v1`), which the
    /// public one (`IRIS_LISTEN`) then answers 404 for; it also serves `/healthz` and
    /// `/readyz`. Unset: everything is served on `IRIS_LISTEN`.
    #[arg(long, global = true, env = "IRIS_INTERNAL_LISTEN")]
    pub internal_listen: Option<std::net::SocketAddr>,

    /// How long a new connection may take to send `hello` before it is closed (ms).
    #[arg(
        long,
        global = true,
        env = "IRIS_HELLO_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub hello_timeout_ms: u64,

    /// How often the gateway pings each WebSocket (ms).
    #[arg(
        long,
        global = true,
        env = "IRIS_HEARTBEAT_INTERVAL_MS",
        default_value_t = 15_000
    )]
    pub heartbeat_interval_ms: u64,

    /// A WebSocket silent for this long (no frame, no pong) is closed (ms).
    #[arg(
        long,
        global = true,
        env = "IRIS_CLIENT_TIMEOUT_MS",
        default_value_t = 45_000
    )]
    pub client_timeout_ms: u64,

    /// How long after `hello.ack` outboxed frames wait for the `sync` of a device that
    /// said it resumes (`hello {resume: true}`) before they flow live anyway (ms). Other
    /// devices get them live at once.
    #[arg(
        long,
        global = true,
        env = "IRIS_SYNC_GRACE_MS",
        default_value_t = 1_000
    )]
    pub sync_grace_ms: u64,

    /// Key that the server API (`/api/v1`) requires as `Authorization: Bearer <key>`;
    /// the API is off without it.
    #[arg(long, global = true, env = "IRIS_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<Secret>,

    /// Most WebSocket connections this node holds; more are refused with HTTP 503.
    #[arg(
        long,
        global = true,
        env = "IRIS_MAX_CONNECTIONS",
        default_value_t = 100_000
    )]
    pub max_connections: i64,

    /// Browser origins allowed to open WebSockets (comma-separated, e.g.
    /// `https://app.example.com`); connections with another `Origin` header are refused
    /// with 403. Empty: every origin (apps send none).
    #[arg(
        long,
        global = true,
        env = "IRIS_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,

    /// Frames a device may send per second on average; more get `error {code: rate_limited}`.
    #[arg(long, global = true, env = "IRIS_FRAME_RATE", default_value_t = 50)]
    pub frame_rate: u32,

    /// Frames a device may send at once before the average rate applies.
    #[arg(long, global = true, env = "IRIS_FRAME_BURST", default_value_t = 200)]
    pub frame_burst: u32,

    /// Largest inbound WebSocket message accepted (bytes).
    #[arg(
        long,
        global = true,
        env = "IRIS_MAX_FRAME_BYTES",
        default_value_t = 65_536
    )]
    pub max_frame_bytes: usize,

    /// Deepest nesting of JSON objects and arrays in an inbound frame (the frame itself is 1).
    #[arg(long, global = true, env = "IRIS_MAX_JSON_DEPTH", default_value_t = DEFAULT_MAX_JSON_DEPTH)]
    pub max_json_depth: usize,

    /// Longest id a device may send (chat, thread, message, device, media, picker ids; bytes).
    #[arg(long, global = true, env = "IRIS_MAX_ID_BYTES", default_value_t = DEFAULT_MAX_ID_BYTES)]
    pub max_id_bytes: usize,

    /// Longest name or title a device may send (channel and device names, file names,
    /// MIME types; bytes).
    #[arg(long, global = true, env = "IRIS_MAX_TITLE_BYTES", default_value_t = DEFAULT_MAX_TITLE_BYTES)]
    pub max_title_bytes: usize,

    /// Longest free text a device may send (message, steering, picker answer; bytes).
    #[arg(long, global = true, env = "IRIS_MAX_TEXT_BYTES", default_value_t = DEFAULT_MAX_TEXT_BYTES)]
    pub max_text_bytes: usize,

    /// Longest search query or command prefix a device may send (bytes).
    #[arg(long, global = true, env = "IRIS_MAX_QUERY_BYTES", default_value_t = DEFAULT_MAX_QUERY_BYTES)]
    pub max_query_bytes: usize,

    /// Longest pairing token, FCM token or ntfy topic a device may send (bytes).
    #[arg(long, global = true, env = "IRIS_MAX_TOKEN_BYTES", default_value_t = DEFAULT_MAX_TOKEN_BYTES)]
    pub max_token_bytes: usize,

    /// `hello` attempts one client IP may make per second on average (failed ones count);
    /// more get `error {code: rate_limited}` and close 4105.
    #[arg(long, global = true, env = "IRIS_HELLO_RATE", default_value_t = 5.0)]
    pub hello_rate: f64,

    /// `hello` attempts one client IP may make at once before the average rate applies.
    #[arg(long, global = true, env = "IRIS_HELLO_BURST", default_value_t = 20)]
    pub hello_burst: u32,

    /// The gateway is behind a proxy: take the client IP from the last address of
    /// `X-Forwarded-For` (the one the proxy added) instead of the socket's peer.
    #[arg(
        long,
        global = true,
        env = "IRIS_TRUST_FORWARDED_FOR",
        default_value_t = false,
        action = clap::ArgAction::Set
    )]
    pub trust_forwarded_for: bool,

    /// Where media bytes are stored: `file:///abs/dir` or `s3://bucket[/prefix]` (S3
    /// endpoint and credentials from the standard `AWS_*` variables). Default: the
    /// directory `iris-media` under the system temp dir.
    #[arg(long, global = true, env = "IRIS_MEDIA_STORE")]
    pub media_store: Option<String>,

    /// Largest media item a device may upload (bytes).
    #[arg(
        long,
        global = true,
        env = "IRIS_MEDIA_MAX_BYTES",
        default_value_t = DEFAULT_MEDIA_MAX_BYTES
    )]
    pub media_max_bytes: u64,

    /// Bytes of frames queued for one connection before it counts as behind: outboxed
    /// frames then wait in the outbox and streaming updates are coalesced to the latest.
    #[arg(
        long,
        global = true,
        env = "IRIS_SEND_QUEUE_BYTES",
        default_value_t = 1024 * 1024
    )]
    pub send_queue_bytes: usize,

    /// How long a connection may stay behind before it is closed as a slow consumer
    /// (close 4104; the device reconnects and `sync`s).
    #[arg(
        long,
        global = true,
        env = "IRIS_SLOW_CONSUMER_MS",
        default_value_t = 10_000
    )]
    pub slow_consumer_ms: u64,

    /// How long a new connection may take to send its whole first request head; one still
    /// sending then gets 408 and is closed (a slowloris client) (ms).
    #[arg(
        long,
        global = true,
        env = "IRIS_REQUEST_HEAD_TIMEOUT_MS",
        default_value_t = 5_000
    )]
    pub request_head_timeout_ms: u64,

    /// Most bytes of header fields (names and values) one request may carry; more get 431.
    #[arg(
        long,
        global = true,
        env = "IRIS_MAX_HEADER_BYTES",
        default_value_t = 32_768
    )]
    pub max_header_bytes: usize,

    /// WebSocket upgrades one client IP may attempt per second on average; more get 429.
    #[arg(long, global = true, env = "IRIS_UPGRADE_RATE", default_value_t = 50.0)]
    pub upgrade_rate: f64,

    /// WebSocket upgrades one client IP may attempt at once before the average rate
    /// applies (a NAT of that many phones reconnecting together still gets in).
    #[arg(long, global = true, env = "IRIS_UPGRADE_BURST", default_value_t = 500)]
    pub upgrade_burst: u32,
}

impl GatewayArgs {
    /// The per-connection send queue limits.
    pub fn send_queue_limits(&self) -> SendQueueLimits {
        SendQueueLimits {
            max_bytes: self.send_queue_bytes.max(1),
            slow_after: Duration::from_millis(self.slow_consumer_ms),
        }
    }
}

/// Default of `IRIS_MEDIA_MAX_BYTES`: 25 MiB.
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 25 * 1024 * 1024;

/// Session timing derived from [`GatewayArgs`].
#[derive(Debug, Clone)]
pub struct SessionLimits {
    /// Deadline for `hello`.
    pub hello_timeout: Duration,
    /// Interval between server pings.
    pub heartbeat_interval: Duration,
    /// Silence after which a connection is dead.
    pub client_timeout: Duration,
    /// Wait for the first `sync` before outboxed frames flow live.
    pub sync_grace: Duration,
    /// Largest inbound text message.
    pub max_frame_bytes: usize,
    /// Largest media upload.
    pub media_max_bytes: u64,
    /// Most connections per node.
    pub max_connections: i64,
    /// Allowed browser origins (empty: all).
    pub allowed_origins: std::sync::Arc<Vec<String>>,
    /// Average text frames per second per connection.
    pub frame_rate: u32,
    /// Text frames allowed at once per connection.
    pub frame_burst: u32,
    /// JSON depth and string lengths a device may send.
    pub input: InputLimits,
    /// Client IPs come from `X-Forwarded-For` (behind a proxy).
    pub trust_forwarded_for: bool,
    /// Most bytes of header fields a request may carry.
    pub max_header_bytes: usize,
}

impl From<&GatewayArgs> for SessionLimits {
    fn from(args: &GatewayArgs) -> Self {
        Self {
            hello_timeout: Duration::from_millis(args.hello_timeout_ms),
            heartbeat_interval: Duration::from_millis(args.heartbeat_interval_ms),
            client_timeout: Duration::from_millis(args.client_timeout_ms),
            sync_grace: Duration::from_millis(args.sync_grace_ms),
            max_frame_bytes: args.max_frame_bytes,
            media_max_bytes: args.media_max_bytes,
            frame_rate: args.frame_rate,
            frame_burst: args.frame_burst,
            input: InputLimits {
                max_json_depth: args.max_json_depth,
                max_id_bytes: args.max_id_bytes,
                max_title_bytes: args.max_title_bytes,
                max_text_bytes: args.max_text_bytes,
                max_query_bytes: args.max_query_bytes,
                max_token_bytes: args.max_token_bytes,
            },
            trust_forwarded_for: args.trust_forwarded_for,
            max_header_bytes: args.max_header_bytes,
            max_connections: args.max_connections,
            allowed_origins: std::sync::Arc::new(
                args.allowed_origins
                    .iter()
                    .map(|origin| origin.trim().trim_end_matches('/').to_owned())
                    .filter(|origin| !origin.is_empty())
                    .collect(),
            ),
        }
    }
}
