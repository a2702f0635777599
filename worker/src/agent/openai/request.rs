//! The body of one streamed `POST /v1/chat/completions`: the conversation so far, then the
//! user's new message.

use serde::Serialize;

use crate::agent::TurnInput;

/// A chat completion request that streams its answer and reports usage at the end.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    /// Left out when nothing names a model, so the upstream picks its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    stream: bool,
    stream_options: StreamOptions,
    messages: Vec<WireMessage<'a>>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    /// Asks for a final chunk with `usage`, the only place token counts are streamed.
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'a str,
    content: &'a str,
}

impl<'a> ChatRequest<'a> {
    /// The request for `input`, answered by `model`.
    pub fn new(model: Option<&'a str>, input: &'a TurnInput) -> Self {
        let earlier = input.history.iter().map(|message| WireMessage {
            role: &message.role,
            content: &message.content,
        });
        let latest = WireMessage {
            role: "user",
            content: &input.text,
        };
        Self {
            model,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            messages: earlier.chain([latest]).collect(),
        }
    }
}
