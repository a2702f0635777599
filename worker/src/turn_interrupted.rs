//! Turns another attempt already began: how far an earlier attempt got, and the visible
//! ending of a turn whose worker stopped mid-way.
//!
//! A turn whose first `agent.busy` is written has reached (or is about to reach) the
//! upstream. Running it again would ask the upstream a second time: a real model answers
//! differently (the device would see the old start joined to a new continuation) and tools
//! could run twice. So such a turn is not re-run: it ends with an `error`, an empty
//! `message.stop {interrupted: true}` and `agent.idle`, each written once by ordinal, and
//! the user can send the message again.

use iris_shared::keys::AccountKeys;
use iris_shared::protocol::{
    AgentIdle, ErrorCode, ErrorPayload, MessageStop, ServerBody, ServerFrame,
};

use crate::publisher::{ChatScope, Outgoing, PublishError};
use crate::turn::{TurnDeps, TurnRequest};
use crate::turn_writer::{ordinal, TurnWriter};

/// What the device is told when its turn was cut off.
pub const INTERRUPTED_MESSAGE: &str =
    "the worker running this turn stopped; the answer was interrupted — send it again or use /retry";

/// How far earlier attempts got with a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnProgress {
    /// Nothing past the user's message is written: run it.
    NotStarted,
    /// It began (`agent.busy` written) but did not end: end it as interrupted.
    Started,
    /// Its `agent.idle` is written: only the acknowledgement was lost.
    Complete,
}

/// Reads which of the turn's fixed effects are written.
pub async fn turn_progress(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<TurnProgress, PublishError> {
    let mut conn = deps.redis.get().await?;
    let key = AccountKeys::new(&scope.account).turn_effects(request.partition, &request.entry_id);
    let (busy, idle): (bool, bool) = redis::pipe()
        .cmd("HEXISTS")
        .arg(&key)
        .arg(ordinal::BUSY.to_string())
        .cmd("HEXISTS")
        .arg(&key)
        .arg(ordinal::IDLE.to_string())
        .query_async(&mut conn)
        .await?;
    Ok(match (busy, idle) {
        (_, true) => TurnProgress::Complete,
        (true, false) => TurnProgress::Started,
        (false, false) => TurnProgress::NotStarted,
    })
}

/// Ends a turn an earlier attempt began: `error {internal}`, `message.stop` with no text
/// and `interrupted: true`, `agent.idle`. Effects the earlier attempt wrote (its error or
/// stop) are not written again.
pub async fn end_interrupted_turn(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<(), PublishError> {
    tracing::warn!(
        account = %scope.account,
        chat = %scope.chat_id,
        partition = request.partition,
        entry = %request.entry_id,
        "turn interrupted: its earlier attempt stopped mid-way; ending it without re-running it"
    );
    let writer = TurnWriter::new(
        deps.publisher.clone(),
        scope.clone(),
        request.partition,
        request.entry_id.clone(),
    );
    let error = ErrorPayload::new(ErrorCode::Internal, INTERRUPTED_MESSAGE.to_owned());
    writer
        .fixed(
            ordinal::ERROR,
            Outgoing::broadcast(ServerFrame::new(ServerBody::Error(error))),
        )
        .await?;
    let stop = MessageStop {
        message_id: Some(request.answer_message_id()),
        final_text: Some(String::new()),
        interrupted: Some(true),
        ..Default::default()
    };
    writer
        .fixed(
            ordinal::STOP,
            Outgoing::broadcast(ServerFrame::new(ServerBody::MessageStop(stop))),
        )
        .await?;
    let idle = ServerBody::AgentIdle(AgentIdle {});
    writer
        .fixed(ordinal::IDLE, Outgoing::broadcast(ServerFrame::new(idle)))
        .await?;
    crate::metrics::get().turns_total.incr("interrupted");
    Ok(())
}
