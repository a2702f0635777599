//! Turns another attempt already began: how far an earlier attempt got, and the visible
//! ending of a turn whose worker stopped mid-way.
//!
//! A turn whose first `agent.busy` is written has reached (or is about to reach) the
//! upstream. If it had started no tool (nothing but text was streamed), running it again
//! is safe: devices see the partial answer replaced by the new one (`message.update`
//! carries the full text) and one `message.stop`. A turn whose tools had started is not
//! re-run, since a tool could run twice: it ends with an `error`, an empty
//! `message.stop {interrupted: true}` and `agent.idle`, each written once by ordinal, and
//! the user can send the message again (or `/retry`).

use iris_shared::protocol::{
    AgentIdle, ErrorCode, ErrorPayload, MessageStop, ServerBody, ServerFrame,
};
use iris_shared::turn_opening::{self, TurnOpening};

use crate::turn::conversation::CONVERSATION_LIMIT;
use crate::turn::publisher::{ChatScope, Outgoing, PublishError};
use crate::turn::request::{TurnDeps, TurnRequest};
use crate::turn::writer::{ordinal, TurnWriter, FIRST_DYNAMIC_ORDINAL};

/// What the device is told when its turn was cut off.
pub const INTERRUPTED_MESSAGE: &str =
    "the worker running this turn stopped; the answer was interrupted — send it again or use /retry";

/// How far earlier attempts got with a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnProgress {
    /// Nothing past the user's message is written: run it.
    NotStarted {
        /// The user's message is written (by the gateway or an earlier attempt).
        user_message_written: bool,
    },
    /// It began (`agent.busy` written) but did not end, and had started no tool: run it
    /// again.
    StartedWithoutTools,
    /// It began and had started tools (or pickers), or had failed: end it as interrupted.
    StartedTools,
    /// Its `message.stop` is written but not its `agent.idle`: only that is left.
    Answered,
    /// Its `agent.idle` is written: only the acknowledgement was lost.
    Complete,
}

/// Reads how far earlier attempts got with the turn (which of its effects are written),
/// with what the turn starts from, in one round trip.
pub async fn turn_progress(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<(TurnProgress, TurnOpening), PublishError> {
    let mut conn = deps.redis.get().await?;
    let opening = turn_opening::load(
        &mut conn,
        &scope.account,
        &scope.chat_id,
        (request.partition, &request.message_key),
        CONVERSATION_LIMIT,
    )
    .await?;
    Ok((progress_of(&opening.written_effects), opening))
}

/// The progress that the written effect ordinals show.
fn progress_of(written: &[u32]) -> TurnProgress {
    let has = |ordinal: u32| written.contains(&ordinal);
    if has(ordinal::IDLE) {
        TurnProgress::Complete
    } else if has(ordinal::STOP) {
        TurnProgress::Answered
    } else if !has(ordinal::BUSY) {
        TurnProgress::NotStarted {
            user_message_written: has(ordinal::USER_MESSAGE),
        }
    } else if has(ordinal::ERROR) || written.iter().any(|&o| o >= FIRST_DYNAMIC_ORDINAL) {
        TurnProgress::StartedTools
    } else {
        TurnProgress::StartedWithoutTools
    }
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
        message_key = %request.message_key,
        "turn interrupted: its earlier attempt stopped mid-way; ending it without re-running it"
    );
    let writer = TurnWriter::new(
        deps.publisher.clone(),
        scope.clone(),
        request.partition,
        request.message_key.clone(),
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

/// Ends a turn whose `message.stop` an earlier attempt wrote: its `agent.idle`.
pub async fn end_answered_turn(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<(), PublishError> {
    let writer = TurnWriter::new(
        deps.publisher.clone(),
        scope.clone(),
        request.partition,
        request.message_key.clone(),
    );
    let idle = ServerBody::AgentIdle(AgentIdle {});
    writer
        .fixed(ordinal::IDLE, Outgoing::broadcast(ServerFrame::new(idle)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_with_only_its_user_message_written_has_not_started() {
        assert_eq!(
            progress_of(&[]),
            TurnProgress::NotStarted {
                user_message_written: false
            }
        );
        assert_eq!(
            progress_of(&[ordinal::USER_MESSAGE, ordinal::QUEUED]),
            TurnProgress::NotStarted {
                user_message_written: true
            }
        );
    }

    #[test]
    fn a_begun_turn_is_run_again_only_while_no_tool_or_picker_was_written() {
        let text_only = [ordinal::USER_MESSAGE, ordinal::BUSY];
        assert_eq!(progress_of(&text_only), TurnProgress::StartedWithoutTools);
        let with_tool = [ordinal::USER_MESSAGE, ordinal::BUSY, FIRST_DYNAMIC_ORDINAL];
        assert_eq!(progress_of(&with_tool), TurnProgress::StartedTools);
    }

    #[test]
    fn a_turn_whose_stop_is_written_only_needs_its_idle() {
        let answered = [ordinal::USER_MESSAGE, ordinal::BUSY, ordinal::STOP];
        assert_eq!(progress_of(&answered), TurnProgress::Answered);
        let failed = [ordinal::USER_MESSAGE, ordinal::BUSY, ordinal::ERROR];
        assert_eq!(progress_of(&failed), TurnProgress::StartedTools);
    }

    #[test]
    fn a_turn_whose_idle_is_written_is_complete() {
        let done = [
            ordinal::USER_MESSAGE,
            ordinal::BUSY,
            ordinal::STOP,
            ordinal::IDLE,
        ];
        assert_eq!(progress_of(&done), TurnProgress::Complete);
    }
}
