//! Wire protocol v1 between the Android app and the server: typed frames, parsing and validation.
//!
//! The contract is the vendored JSON description in `spec/iris-hermes-wire-protocol.schema.json`;
//! `tests/protocol_contract.rs` checks every type here against it.
//!
//! # Layout
//! - [`envelope`]: the protocol version and the flat `{v, id, seq, type, chat_id, thread_id, payload}` shape.
//! - [`server`]: frames the server sends ([`ServerFrame`], [`ServerBody`] and one payload struct per type).
//! - [`app`]: frames the app sends ([`AppFrame`], [`AppBody`] and one payload struct per type).
//! - [`parse`]: turning an app's text frame into an [`AppFrame`] or a [`ProtocolError`].
//! - [`limits`]: [`InputLimits`], the nesting depth and per-field string lengths a device may send.
//! - [`error`]: [`ProtocolError`], which remembers the request id so the answer can carry it.
//! - [`enums`]: the closed string vocabularies of the contract (roles, error codes, kinds, ...).
//! - [`reliability`]: which frame types must never be dropped under backpressure, and which
//!   may be coalesced.
//! - [`chat_id`]: the shape of chat ids and the default chat.

pub mod app;
pub mod chat_id;
pub mod enums;
pub mod envelope;
pub mod error;
pub mod limits;
pub mod parse;
pub mod reliability;
pub mod server;

pub use app::{
    AgentSteer, AgentStop, AppBody, AppFrame, ChannelCreate, ChannelDelete, ChannelRename,
    ChannelSetDefault, CommandsCatalogRequest, CommandsCompleteRequest, FcmRegister, Hello,
    HelloCaps, HistoryRequest, MediaPull, MediaUploadEnd, MediaUploadStart, MessageSend,
    PickerSelect, Ping, ReadReceipt, SearchRequest, SyncRequest, MAX_HISTORY_LIMIT,
    MIN_HISTORY_LIMIT,
};
pub use chat_id::{is_valid_chat_id, DEFAULT_CHAT_ID};
pub use enums::{
    BusyReason, ChannelKind, ErrorCode, MediaKind, NewChannelKind, NotificationKind, PushKind,
    Role, SearchScope, StatusState,
};
pub use envelope::PROTOCOL_VERSION;
pub use error::{ProtocolError, ProtocolErrorKind};
pub use limits::InputLimits;
pub use parse::{parse_app_frame, parse_app_frame_within};
pub use reliability::{backpressure_role, is_never_dropped_type, BackpressureRole, StreamKey};
pub use server::{
    AgentBusy, AgentIdle, Channel, ChannelDeleted, ChannelList, ChannelRenamed, ChoiceOption,
    CommandInfo, CommandMatch, CommandsCatalog, CommandsComplete, Commentary, ErrorPayload,
    HelloAck, History, HistoryMessage, MediaPullEnd, MediaRef, MessagePayload, MessageStart,
    MessageStop, MessageUpdate, ModelOption, ModelProvider, Notification, PickerApproval,
    PickerChoice, PickerClarify, PickerConfirm, PickerModel, Pong, SearchHit, SearchResults,
    ServerBody, ServerCaps, ServerFrame, Status, SyncDone, ToolEnd, ToolProgress, ToolStart,
    Typing,
};
