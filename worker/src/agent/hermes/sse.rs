//! Reading an SSE response body as frames, with an idle limit: Hermes sends `: keepalive`
//! every 30 s, so a body that delivers no bytes at all for much longer is a dead connection
//! even if TCP has not noticed yet.

use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::stream::{self, Stream, StreamExt};
use reqwest::Response;

use super::endpoint::describe_error;

/// Why the frames stopped before the body ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SseError {
    /// No bytes (not even a keepalive comment) for this long.
    #[error("no data for {0:?}")]
    Idle(Duration),
    /// The connection failed.
    #[error("{0}")]
    Transport(String),
    /// The bytes are not SSE (bad UTF-8 or syntax).
    #[error("malformed event stream: {0}")]
    Malformed(String),
}

/// The frames of `response`'s body. Comments (keepalives) reset the idle limit but yield no
/// frame. Ends after the body ends or after the first error.
pub(super) fn frames(
    response: Response,
    idle_limit: Duration,
) -> impl Stream<Item = Result<Event, SseError>> {
    let guarded = stream::unfold(
        Some(response.bytes_stream().boxed()),
        move |body| async move {
            let mut body = body?;
            match tokio::time::timeout(idle_limit, body.next()).await {
                Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(body))),
                Ok(Some(Err(err))) => Some((Err(SseError::Transport(describe_error(&err))), None)),
                Ok(None) => None,
                Err(_elapsed) => Some((Err(SseError::Idle(idle_limit)), None)),
            }
        },
    );
    guarded.eventsource().map(|frame| {
        frame.map_err(|err| match err {
            EventStreamError::Transport(err) => err,
            EventStreamError::Utf8(err) => SseError::Malformed(err.to_string()),
            EventStreamError::Parser(err) => SseError::Malformed(err.to_string()),
        })
    })
}
