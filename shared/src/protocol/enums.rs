//! The closed string vocabularies of the contract (roles, kinds, reasons, states, codes).

use serde::{Deserialize, Serialize};

/// Who authored a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Typed by the person using the app.
    User,
    /// Written by the agent.
    Assistant,
    /// Produced by the system itself.
    System,
    /// Produced by a scheduled (cron) job.
    Cron,
}

/// What a `notification` frame is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// A channel got a new name.
    ChannelRenamed,
    /// A channel was created.
    ChannelCreated,
    /// A scheduled job reported something.
    Cron,
    /// The agent waits for an approval.
    Approval,
    /// The agent asks a clarifying question.
    Clarify,
    /// Anything else.
    Generic,
}

/// Why the agent is busy (`agent.busy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BusyReason {
    /// Thinking about a message.
    Processing,
    /// Running a tool.
    Tool,
    /// Waiting for the user's answer to a picker.
    WaitingInput,
    /// Running a scheduled job.
    Cron,
}

/// Health of the server (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusState {
    /// Fully working.
    Online,
    /// Going down for a restart.
    Restarting,
    /// Working with reduced capabilities.
    Degraded,
}

/// Machine-readable reason of an `error` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Pairing token missing or wrong.
    Auth,
    /// The referenced chat, message or media does not exist.
    NotFound,
    /// Too many requests.
    RateLimited,
    /// The media exceeds the size limit.
    MediaTooLarge,
    /// The frame is not understood (bad JSON, version, type or payload).
    Unsupported,
    /// The server failed.
    Internal,
}

/// Push channel the server uses to wake the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PushKind {
    /// Firebase Cloud Messaging.
    Fcm,
    /// ntfy topics.
    Ntfy,
    /// No push at all.
    None,
}

/// Kind of a media attachment (`definitions.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// A picture.
    Image,
    /// An audio file.
    Audio,
    /// A video.
    Video,
    /// Any other document.
    Document,
    /// A recorded voice note.
    Voice,
}

/// Kind of an existing channel (`definitions.channel.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// The default chat every device has.
    Default,
    /// A user-created channel.
    Channel,
    /// A thread under a parent chat.
    Thread,
}

/// Kind of a channel the app asks to create (`channel.create.kind`); the default chat cannot be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewChannelKind {
    /// A top-level channel.
    Channel,
    /// A thread under `parent_chat_id`.
    Thread,
}

/// Where a search looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchScope {
    /// Every chat of the account.
    All,
    /// Only the given chat.
    Chat,
}
