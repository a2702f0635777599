//! Frames the app sends to the server: [`AppBody`] (type + payload) and the [`AppFrame`] envelope.
//!
//! Payload structs live in one file per family; every field is optional, unknown fields are ignored.
//! Text from the network goes through [`crate::protocol::parse_app_frame`].

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

pub use agent::{AgentSteer, AgentStop};
pub use channels::{ChannelCreate, ChannelDelete, ChannelRename, ChannelSetDefault};
pub use commands::{CommandsCatalogRequest, CommandsCompleteRequest};
pub use frame::AppFrame;
pub use history::{HistoryRequest, MAX_HISTORY_LIMIT, MIN_HISTORY_LIMIT};
pub use media::{MediaPull, MediaUploadEnd, MediaUploadStart};
pub use messages::{MessageSend, ReadReceipt};
pub use pickers::PickerSelect;
pub use search::SearchRequest;
pub use session::{FcmRegister, Hello, HelloCaps, Ping, SyncRequest};

use serde::{Deserialize, Serialize};

/// Declares [`AppBody`] from `"wire.type" => Variant(Payload)` lines, so each type name is written once.
macro_rules! app_body {
    ($($(#[doc = $doc:literal])* $name:literal => $variant:ident($payload:ty),)*) => {
        /// The type and payload of one app → server frame; (de)serializes as `{"type": ..., "payload": {...}}`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "payload")]
        pub enum AppBody {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant($payload),)*
        }

        impl AppBody {
            /// Every app → server type name, in contract order.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($name),*];

            /// The wire `type` of this frame, e.g. `"message.send"`.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }
        }

        $(
            impl From<$payload> for AppBody {
                fn from(payload: $payload) -> Self {
                    Self::$variant(payload)
                }
            }
        )*
    };
}

app_body! {
    /// First frame: authentication and device capabilities.
    "hello" => Hello(Hello),
    /// Send a message.
    "message.send" => MessageSend(MessageSend),
    /// Binary media frames for an upload follow.
    "media.upload.start" => MediaUploadStart(MediaUploadStart),
    /// All binary frames of an upload were sent.
    "media.upload.end" => MediaUploadEnd(MediaUploadEnd),
    /// Ask for the bytes of a media item.
    "media.pull" => MediaPull(MediaPull),
    /// Answer a picker.
    "picker.select" => PickerSelect(PickerSelect),
    /// Create a channel or thread.
    "channel.create" => ChannelCreate(ChannelCreate),
    /// Rename the frame's chat.
    "channel.rename" => ChannelRename(ChannelRename),
    /// Make the frame's chat the default.
    "channel.set_default" => ChannelSetDefault(ChannelSetDefault),
    /// Delete the frame's chat.
    "channel.delete" => ChannelDelete(ChannelDelete),
    /// Search messages.
    "search" => Search(SearchRequest),
    /// Load a page of messages.
    "history" => History(HistoryRequest),
    /// Fetch the slash-command catalog.
    "commands.catalog" => CommandsCatalog(CommandsCatalogRequest),
    /// Autocomplete a typed `/prefix`.
    "commands.complete" => CommandsComplete(CommandsCompleteRequest),
    /// Abort the current agent turn.
    "agent.stop" => AgentStop(AgentStop),
    /// Inject a steering message mid-turn.
    "agent.steer" => AgentSteer(AgentSteer),
    /// The user viewed a message.
    "read.receipt" => ReadReceipt(ReadReceipt),
    /// Reconnect catch-up: replay undelivered outbox frames.
    "sync" => Sync(SyncRequest),
    /// Register or change the push target.
    "fcm.register" => FcmRegister(FcmRegister),
    /// Keep-alive.
    "ping" => Ping(Ping),
}
