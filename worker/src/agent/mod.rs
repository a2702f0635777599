//! The agent backend interface: what a chat actor needs from an upstream agent, whatever
//! it is (Hermes runs API, an OpenAI-compatible endpoint, or the built-in echo agent).
//!
//! A turn is [`Agent::start`]ed with the conversation so far and yields an [`AgentRun`]:
//! a stream of [`AgentEvent`]s that ends with exactly one of `Done`, `Failed` or
//! `Cancelled`, and a [`RunControl`] to stop the run, answer its approvals or steer it.
//! Backends translate upstream failures into `Failed` events; they never leave the stream
//! hanging without an end (a dropped connection is a failure too).

mod echo;
mod hermes;
mod openai;

pub use echo::EchoAgent;
pub use hermes::HermesAgent;
pub use openai::OpenAiAgent;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;

use iris_shared::redact::Secret;

/// One earlier message of the conversation, as upstream agents take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The message text.
    pub content: String,
}

/// Input of one agent turn.
#[derive(Debug, Clone, Default)]
pub struct TurnInput {
    /// The user's message for this turn.
    pub text: String,
    /// The conversation before it, oldest first (taken from the chat history in Redis).
    pub history: Vec<ChatMessage>,
    /// Model chosen for the chat (`None`: the backend's default).
    pub model: Option<String>,
    /// A stable id of the chat, for upstreams that group runs into sessions.
    pub session_id: String,
    /// A stable id of this turn, the same when a turn is run again after its worker
    /// stopped: sent as `Idempotency-Key` where the upstream can take one.
    pub turn_key: String,
    /// Images attached to the user's message, for upstreams that can see them.
    pub images: Vec<ImageInput>,
    /// Ids of all media attached to the user's message.
    pub media_ids: Vec<String>,
}

/// An image attached to the user's message.
#[derive(Clone, PartialEq, Eq)]
pub struct ImageInput {
    /// Its MIME type, e.g. `image/png`.
    pub mime: String,
    /// Its bytes.
    pub data: Vec<u8>,
    /// Its file name, if the device gave one.
    pub filename: Option<String>,
}

impl std::fmt::Debug for ImageInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageInput")
            .field("mime", &self.mime)
            .field("bytes", &self.data.len())
            .field("filename", &self.filename)
            .finish()
    }
}

/// What the upstream agent did, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// More answer text, appended to what came before.
    TextDelta(String),
    /// More reasoning text, appended to the reasoning so far (shown above the answer).
    ReasoningDelta(String),
    /// A tool call began.
    ToolStarted {
        /// Tool name.
        name: String,
        /// Short human-readable preview (e.g. the command).
        preview: Option<String>,
        /// Arguments, when the upstream reports them.
        args: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// Progress of the running tool call.
    ToolProgress {
        /// Tool name.
        name: String,
        /// What it is doing.
        note: String,
    },
    /// The running tool call finished.
    ToolCompleted {
        /// Tool name.
        name: String,
        /// Seconds it took, when reported.
        duration_secs: Option<f64>,
        /// Whether it succeeded.
        ok: bool,
        /// Start of its output, when reported.
        output_preview: Option<String>,
    },
    /// The agent waits for the user to approve a command.
    ApprovalRequested {
        /// Upstream's id of this approval (passed back to [`RunControl::approve`]).
        approval_id: String,
        /// The command to approve.
        command: String,
        /// Why it needs approval.
        description: String,
        /// Choices the upstream accepts (e.g. once, session, always, deny).
        choices: Vec<String>,
    },
    /// An approval was answered (by anyone).
    ApprovalResolved {
        /// The choice taken.
        choice: String,
    },
    /// The agent produced media, already stored for the account under this id; devices
    /// get a `media.offer` and the answer carries it.
    MediaProduced {
        /// The stored media's id.
        media_id: String,
    },
    /// The turn finished.
    Done {
        /// Model that answered.
        model: Option<String>,
        /// Tokens the turn used, if the upstream reports them.
        tokens: Option<u64>,
    },
    /// The upstream failed; the turn ends with an error frame.
    Failed(String),
    /// The run was stopped by [`RunControl::stop`].
    Cancelled,
}

/// Errors of control calls and model listing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The upstream cannot do this at all (e.g. Hermes 0.19 has no steer endpoint).
    #[error("not supported by this agent: {0}")]
    Unsupported(String),
    /// The run is not in a state for this (finished, no such approval, ...).
    #[error("{0}")]
    NotActive(String),
    /// The upstream failed or could not be reached.
    #[error("agent upstream: {0}")]
    Upstream(String),
}

/// Controls of one running turn.
pub trait RunControl: Send + Sync {
    /// Asks the upstream to stop the run; the event stream then ends with `Cancelled`
    /// (or `Done`/`Failed` if it finished first).
    fn stop(&self) -> BoxFuture<'static, Result<(), AgentError>>;
    /// Answers approval `approval_id` with `choice` (once, session, always, deny).
    fn approve(
        &self,
        approval_id: &str,
        choice: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>>;
    /// Injects `text` into the running turn; `Unsupported` if the upstream cannot.
    fn steer(&self, text: &str) -> BoxFuture<'static, Result<(), AgentError>>;
}

/// A started turn.
pub struct AgentRun {
    /// Its events; ends after `Done`, `Failed` or `Cancelled`.
    pub events: BoxStream<'static, AgentEvent>,
    /// Its controls.
    pub control: Arc<dyn RunControl>,
}

/// A model the upstream offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// Id to pass back as [`TurnInput::model`].
    pub id: String,
    /// Name to show.
    pub label: String,
}

/// What an upstream can do, announced to devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AgentCaps {
    /// Tool calls are reported.
    pub tools: bool,
    /// Reasoning is streamed.
    pub reasoning: bool,
    /// Approvals are asked for.
    pub approvals: bool,
    /// Running turns can be steered.
    pub steer: bool,
}

/// An upstream agent.
pub trait Agent: Send + Sync {
    /// Starts a turn.
    fn start(&self, input: TurnInput) -> AgentRun;
    /// Models the upstream offers (for the model picker).
    fn models(&self) -> BoxFuture<'static, Result<Vec<ModelInfo>, AgentError>>;
    /// What the upstream can do (probed at start-up where the upstream says).
    fn caps(&self) -> AgentCaps;
    /// Name of the backend's default model, shown when the chat picked none.
    fn default_model(&self) -> Option<String>;
}

/// Where an upstream agent is and how to reach it (`IRIS_AGENT_URL`, `IRIS_AGENT_API_KEY`,
/// `IRIS_AGENT_MODEL`).
#[derive(Debug, Clone, Default)]
pub struct UpstreamConfig {
    /// Base URL, e.g. `http://127.0.0.1:8642` (a trailing `/v1` is accepted too).
    pub url: String,
    /// Bearer token, if the upstream needs one.
    pub api_key: Option<Secret>,
    /// Default model, if configured.
    pub model: Option<String>,
}
