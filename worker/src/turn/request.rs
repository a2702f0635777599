//! What a turn answers and is given: the inbound `message.send` it runs for, what the chat
//! knows when it starts, and the worker's parts it writes with.

use std::sync::Arc;

use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::media::store::MediaStore;
use iris_shared::partition::Partition;
use iris_shared::redis_conn::Pool;
use iris_shared::turn_opening::TurnOpening;
use iris_shared::user_message;

use crate::agent::Agent;
use crate::turn::publisher::Publisher;

/// The inbound request a turn answers.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// Partition the request came from.
    pub partition: Partition,
    /// The key its messages and effects are named by: the one the gateway gave the
    /// user's message, or the inbound entry id.
    pub message_key: String,
    /// Device that sent it.
    pub device_id: String,
    /// Its request id.
    pub request_id: Option<u64>,
    /// The user's text.
    pub text: String,
    /// Media attached to the message (ids of the account's uploaded media).
    pub media_ids: Vec<String>,
    /// When the gateway received it.
    pub received_ms: u64,
}

impl TurnRequest {
    /// The turn of a `message.send` read from `entry`.
    pub fn new(
        entry: &InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        text: String,
        media_ids: Vec<String>,
    ) -> Self {
        Self {
            partition: entry.partition,
            message_key: request
                .user_message_key
                .clone()
                .unwrap_or_else(|| entry.entry_id.clone()),
            device_id: request.device_id.clone(),
            request_id,
            text,
            media_ids,
            received_ms: request.received_ms,
        }
    }

    /// Message id of the user's message (stable across re-runs).
    pub fn user_message_id(&self) -> String {
        user_message::user_message_id(self.partition, &self.message_key)
    }

    /// Message id of the agent's answer (stable across re-runs).
    pub fn answer_message_id(&self) -> String {
        user_message::answer_message_id(self.partition, &self.message_key)
    }
}

/// What the chat knows when a turn starts.
#[derive(Debug, Clone, Default)]
pub struct TurnStart {
    /// The user's message is written already (by the gateway, or an earlier attempt).
    pub user_message_written: bool,
    /// User messages queued behind this one, in order (shown in `agent.busy`).
    pub queued: Vec<String>,
    /// The chat's settings and conversation, read as the turn began.
    pub opening: TurnOpening,
}

/// What a turn needs from its worker.
#[derive(Clone)]
pub struct TurnDeps {
    /// Frame writer.
    pub publisher: Publisher,
    /// Redis pool (history, settings, pickers).
    pub redis: Pool,
    /// The upstream agent.
    pub agent: Arc<dyn Agent>,
    /// Name of the upstream agent kind (`echo`, `hermes`, `openai`), shown to users.
    pub agent_name: String,
    /// The media store, to show attached images to the agent.
    pub media: Arc<MediaStore>,
}
