//! Agent activity server payloads: `agent.busy` and `agent.idle`.

use serde::{Deserialize, Serialize};

use crate::protocol::enums::BusyReason;

/// Payload of `agent.busy`: the agent is working (or has work waiting).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentBusy {
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<BusyReason>,
    /// Iris extension: the user message being answered now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Iris extension: user messages waiting for their turn, in the order they will be
    /// answered (empty or absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<Vec<String>>,
    /// Iris extension: `true` while no worker runs the chat's agent; its messages wait
    /// and are answered once one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<bool>,
}

impl AgentBusy {
    /// `agent.busy {reason}` with no extensions.
    pub fn because(reason: BusyReason) -> Self {
        Self {
            reason: Some(reason),
            ..Default::default()
        }
    }
}

/// Payload of `agent.idle`: the turn is over. Always serializes as `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentIdle {}
