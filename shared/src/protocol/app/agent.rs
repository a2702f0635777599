//! Agent control app payloads: `agent.stop` and `agent.steer`.

use serde::{Deserialize, Serialize};

/// Payload of `agent.stop`: abort the current turn. Always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStop {}

/// Payload of `agent.steer`: inject a steering message mid-turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSteer {
    /// The steering text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
