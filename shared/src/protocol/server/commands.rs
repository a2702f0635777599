//! Slash-command server payloads: the full catalog and prefix completions.

use serde::{Deserialize, Serialize};

/// Payload of `commands.catalog`: every slash command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandsCatalog {
    /// The commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<CommandInfo>>,
}

/// One slash command of the catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// Command name, e.g. `/model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Hint for its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hint: Option<String>,
    /// Group it is listed under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// Payload of `commands.complete`: commands matching a typed prefix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandsComplete {
    /// The prefix that was completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Matching commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<CommandMatch>>,
}

/// One completion of `commands.complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandMatch {
    /// Command name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Hint for its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hint: Option<String>,
}
