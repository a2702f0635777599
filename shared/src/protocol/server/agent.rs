//! Agent activity server payloads: `agent.busy` and `agent.idle`.

use serde::{Deserialize, Serialize};

use crate::protocol::enums::BusyReason;

/// Payload of `agent.busy`: the agent is working.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentBusy {
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<BusyReason>,
}

/// Payload of `agent.idle`: the turn is over. Always serializes as `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentIdle {}
