//! Session-level server payloads: pairing ack, status, errors, pong and sync completion.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Channel;
use crate::protocol::enums::{ErrorCode, PushKind, StatusState};

/// Payload of `hello.ack`: pairing succeeded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HelloAck {
    /// What this server can do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_caps: Option<ServerCaps>,
    /// The newest outbox position; the device passes it to `sync` after reconnecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_cursor: Option<u64>,
    /// All channels of the account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<Channel>>,
}

/// Capabilities the server announces in `hello.ack`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCaps {
    /// Messages are streamed with `message.start`/`update`/`stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Messages may carry reasoning text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// Tool calls are reported with `tool.*` frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// Media upload and download work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<bool>,
    /// `search` works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<bool>,
    /// How the server wakes the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<PushKind>,
    /// `picker.*` frames may be sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickers: Option<bool>,
}

/// Payload of `status`: server health.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// Overall state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StatusState>,
    /// Free-form details about the agent session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Map<String, Value>>,
}

/// Payload of `error`: why a request failed. Both fields are always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorPayload {
    /// Machine-readable reason.
    pub code: ErrorCode,
    /// Human-readable explanation.
    pub message: String,
}

impl ErrorPayload {
    /// An error with the given code and explanation.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Payload of `pong`: answer to `ping`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pong {
    /// The `ts` the ping carried, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

/// Payload of `sync.done`: the outbox replay after `sync` is complete.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncDone {
    /// The outbox position the device is now caught up to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    /// Extension to the contract: `Some(true)` when the cursor the device sent could not be
    /// served (e.g. trimmed from the outbox), so the device must reload history itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<bool>,
}
