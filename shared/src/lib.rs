//! Iris Cluster shared library: everything both node kinds must agree on.
//!
//! # Layout
//! - [`protocol`]: the typed wire frames of protocol v1 (app ⇄ server), parsing and validation.
//! - [`keys`]: the one place that names Redis keys; Lua scripts live beside it in `scripts/`.
//! - [`scripts`]: the Lua scripts for every multi-key atomic step, loaded once.
//! - [`partition`]: which inbound partition a chat belongs to.
//! - [`channels`]: an account's channels and threads, with read markers.
//! - [`history`]: a chat's history: pages, recent entries, forgetting entries.
//! - [`chat_settings`]: a chat's settings (model, reasoning, conversation start, busy policy).
//! - [`inbound`]: entries of the per-partition inbound streams (gateway → worker) and the
//!   workers' consumer group on them.
//! - [`consumer_group`]: reading, claiming and acknowledging stream entries for a group.
//! - [`outbox`]: the per-account outbox (the replay log behind `sync`) and its cursor rules.
//! - [`delivery`]: entries of the per-gateway-node delivery streams (worker → gateway).
//! - [`publish`]: writing one chat frame: outbox, then delivery, push job and search entry.
//! - [`server_publish`]: a server API request as the frame it becomes, written once.
//! - [`user_message`]: the user's own message of a `message.send`, written at once.
//! - [`presence`]: which devices of an account have a session on which gateway node, and
//!   which gateway nodes are live.
//! - [`tokens`]: device tokens, stored hashed: creation, verification, revocation, listing.
//! - [`devices`]: the record of each device's last pairing.
//! - [`pickers`]: open pickers any device can answer, answered at most once.
//! - [`agent_capabilities`]: what the workers' upstream agent can do and what devices are
//!   pushed with, as `hello.ack` announces it.
//! - [`push`]: push targets, online devices and the push jobs stream.
//! - [`media`]: media bytes: binary frames, the object store (directory or S3), metadata.
//! - [`search`]: the per-account message search index (an inverted index in plain Redis).
//! - [`lease`]: partition leases with fencing tokens.
//! - [`local_port`]: free loopback ports for processes that start local servers.
//! - [`redact`]: how settings that may carry a password are shown in logs and errors.
//! - [`redis_conn`]: connection pools and dedicated blocking connections (direct or via
//!   Sentinel); the readiness `ping`.
//! - [`backoff`]: exponential backoff with jitter for every loop that reconnects to Redis.
//! - [`cluster_epoch`]: the epoch that reveals a Redis that lost the cluster's data.
//! - [`config`]: command-line flags and environment variables both binaries share.
//! - [`shutdown`]: the signal that stops a node.
//! - [`telemetry`]: logging setup.
//! - [`clock`]: wall-clock milliseconds.
//!
//! This crate knows nothing about actix, WebSockets or agents.

pub mod agent_capabilities;
pub mod backoff;
pub mod channels;
pub mod chat_settings;
pub mod clock;
pub mod cluster_epoch;
pub mod config;
pub mod consumer_group;
pub mod delivery;
pub mod devices;
pub mod history;
pub mod inbound;
pub mod keys;
pub mod lease;
pub mod local_port;
pub mod media;
pub mod metrics;
pub mod outbox;
pub mod partition;
pub mod pickers;
pub mod presence;
pub mod protocol;
pub mod publish;
pub mod push;
pub mod redact;
pub mod redis_conn;
pub mod scripts;
pub mod search;
pub mod server_publish;
pub mod shutdown;
pub mod telemetry;
pub mod tokens;
pub mod turn_opening;
pub mod user_message;
