//! Frames the server sends to the app: [`ServerBody`] (type + payload) and the [`ServerFrame`] envelope.
//!
//! Payload structs live in one file per family; every field is optional and omitted when `None`.

mod agent;
mod channels;
mod commands;
mod frame;
mod history;
mod media;
mod messages;
mod pickers;
mod search;
mod session;
mod tools;

pub use agent::{AgentBusy, AgentIdle};
pub use channels::{Channel, ChannelDeleted, ChannelList, ChannelRenamed};
pub use commands::{CommandInfo, CommandMatch, CommandsCatalog, CommandsComplete};
pub use frame::ServerFrame;
pub use history::{History, HistoryMessage};
pub use media::{MediaPullEnd, MediaRef};
pub use messages::{
    Commentary, MessagePayload, MessageStart, MessageStop, MessageUpdate, Notification, Typing,
};
pub use pickers::{
    ChoiceOption, ModelOption, ModelProvider, PickerApproval, PickerChoice, PickerClarify,
    PickerConfirm, PickerModel,
};
pub use search::{SearchHit, SearchResults};
pub use session::{ErrorPayload, HelloAck, Pong, ServerCaps, Status, SyncDone};
pub use tools::{ToolEnd, ToolProgress, ToolStart};

use serde::{Deserialize, Serialize};

use super::reliability::is_never_dropped_type;

/// Declares [`ServerBody`] from `"wire.type" => Variant(Payload)` lines, so each type name is written once.
macro_rules! server_body {
    ($($(#[doc = $doc:literal])* $name:literal => $variant:ident($payload:ty),)*) => {
        /// The type and payload of one server → app frame; serializes as `{"type": ..., "payload": {...}}`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "payload")]
        pub enum ServerBody {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant($payload),)*
        }

        impl ServerBody {
            /// Every server → app type name, in contract order.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($name),*];

            /// The wire `type` of this frame, e.g. `"message.start"`.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }
        }

        $(
            impl From<$payload> for ServerBody {
                fn from(payload: $payload) -> Self {
                    Self::$variant(payload)
                }
            }
        )*
    };
}

server_body! {
    /// Pairing succeeded.
    "hello.ack" => HelloAck(HelloAck),
    /// A final or standalone message.
    "message" => Message(MessagePayload),
    /// A streamed message begins.
    "message.start" => MessageStart(MessageStart),
    /// The full current text of a streamed message.
    "message.update" => MessageUpdate(MessageUpdate),
    /// A streamed message is complete.
    "message.stop" => MessageStop(MessageStop),
    /// An intermediate assistant beat.
    "commentary" => Commentary(Commentary),
    /// A tool call begins.
    "tool.start" => ToolStart(ToolStart),
    /// A tool call reports progress.
    "tool.progress" => ToolProgress(ToolProgress),
    /// A tool call finished.
    "tool.end" => ToolEnd(ToolEnd),
    /// The typing indicator switches on or off.
    "typing" => Typing(Typing),
    /// Something worth a system notification.
    "notification" => Notification(Notification),
    /// Choose a model.
    "picker.model" => PickerModel(PickerModel),
    /// Choose one of several values.
    "picker.choice" => PickerChoice(PickerChoice),
    /// Answer a clarifying question.
    "picker.clarify" => PickerClarify(PickerClarify),
    /// Approve a command.
    "picker.approval" => PickerApproval(PickerApproval),
    /// Confirm an action.
    "picker.confirm" => PickerConfirm(PickerConfirm),
    /// All channels of the account.
    "channel.list" => ChannelList(ChannelList),
    /// A channel was created.
    "channel.created" => ChannelCreated(Channel),
    /// A channel got a new name.
    "channel.renamed" => ChannelRenamed(ChannelRenamed),
    /// A channel was deleted.
    "channel.deleted" => ChannelDeleted(ChannelDeleted),
    /// A page of messages, oldest to newest (answer to `history`).
    "history" => History(History),
    /// The full slash-command catalog.
    "commands.catalog" => CommandsCatalog(CommandsCatalog),
    /// Autocomplete matches for a typed prefix.
    "commands.complete" => CommandsComplete(CommandsComplete),
    /// The agent is working; show the thinking indicator.
    "agent.busy" => AgentBusy(AgentBusy),
    /// The agent's turn is over; clear the thinking indicator.
    "agent.idle" => AgentIdle(AgentIdle),
    /// Search hits (answer to `search`).
    "search.results" => SearchResults(SearchResults),
    /// Media the agent sent is ready to be pulled.
    "media.offer" => MediaOffer(MediaRef),
    /// Server health.
    "status" => Status(Status),
    /// A request failed.
    "error" => Error(ErrorPayload),
    /// Answer to `ping`.
    "pong" => Pong(Pong),
    /// Replay of the outbox after `sync` is complete.
    "sync.done" => SyncDone(SyncDone),
    /// The bytes of a pulled media item were all sent.
    "media.pull.end" => MediaPullEnd(MediaPullEnd),
}

impl ServerBody {
    /// True when this frame must never be dropped under backpressure (see [`is_never_dropped_type`]).
    pub fn is_never_dropped(&self) -> bool {
        is_never_dropped_type(self.type_name())
    }
}
