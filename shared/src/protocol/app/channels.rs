//! Channel app payloads: create, rename, set default, delete (the last three act on the frame's chat).

use serde::{Deserialize, Serialize};

use crate::protocol::enums::NewChannelKind;

/// Payload of `channel.create`: create a channel or thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChannelCreate {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Channel or thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<NewChannelKind>,
    /// For threads, the chat to hang under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_chat_id: Option<String>,
}

/// Payload of `channel.rename`: rename the frame's chat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChannelRename {
    /// The new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Payload of `channel.set_default`: make the frame's chat the default. Always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelSetDefault {}

/// Payload of `channel.delete`: delete the frame's chat. Always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelDelete {}
