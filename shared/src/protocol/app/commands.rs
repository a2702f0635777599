//! Slash-command app payloads: `commands.catalog` and `commands.complete`.

use serde::{Deserialize, Serialize};

/// Payload of `commands.catalog`: fetch every slash command. Always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandsCatalogRequest {}

/// Payload of `commands.complete`: autocomplete a typed `/prefix`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandsCompleteRequest {
    /// What the user typed so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}
