//! The agent backend interface: what a chat actor needs from an upstream agent, whatever
//! it is. A turn is a stream of [`AgentEvent`]s ending with `Done` or `Failed`.

mod echo;

pub use echo::EchoAgent;

use futures_util::stream::BoxStream;

/// Input of one agent turn.
#[derive(Debug, Clone)]
pub struct TurnInput {
    /// The user's message.
    pub text: String,
}

/// What the upstream agent did, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// More answer text (appended to what came before).
    TextDelta(String),
    /// The turn finished.
    Done {
        /// Model that answered.
        model: Option<String>,
        /// Tokens the turn used, if the upstream reports them.
        tokens: Option<u64>,
    },
    /// The upstream failed; the turn ends with an error frame.
    Failed(String),
}

/// An upstream agent.
pub trait Agent: Send + Sync {
    /// Starts a turn; the stream ends after `Done` or `Failed`.
    fn run(&self, input: TurnInput) -> BoxStream<'static, AgentEvent>;
}
