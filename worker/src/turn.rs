//! One agent turn for a `message.send`, as frames: the user's `message`, `agent.busy`,
//! `message.start`, `message.update`s, `message.stop`, `agent.idle`.
//!
//! Every never-dropped frame of the turn is an effect with a fixed ordinal, so a turn that
//! runs again after a worker died (its inbound entry was never acknowledged) writes each
//! of them once: devices see one user message and one answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;

use iris_shared::clock::now_ms;
use iris_shared::outbox::EffectId;
use iris_shared::partition::Partition;
use iris_shared::protocol::{
    AgentBusy, AgentIdle, BusyReason, ErrorCode, ErrorPayload, MessagePayload, MessageStart,
    MessageStop, MessageUpdate, Role, ServerBody, ServerFrame,
};

use crate::agent::{Agent, AgentEvent, TurnInput};
use crate::publisher::{ChatScope, Outgoing, PublishError, Publisher};

/// Effect ordinals of a turn. Live-only frames (`message.start`, `message.update`) have none.
mod ordinal {
    pub const USER_MESSAGE: u32 = 0;
    pub const BUSY: u32 = 1;
    pub const ERROR: u32 = 2;
    pub const STOP: u32 = 3;
    pub const IDLE: u32 = 4;
}

/// The last effect of a turn: once written, the turn is complete.
pub const FINAL_ORDINAL: u32 = ordinal::IDLE;

/// The inbound request a turn answers.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// Partition the request came from.
    pub partition: Partition,
    /// Its inbound entry id.
    pub entry_id: String,
    /// Device that sent it.
    pub device_id: String,
    /// Its request id.
    pub request_id: Option<u64>,
    /// The user's text.
    pub text: String,
    /// When the gateway received it.
    pub received_ms: u64,
}

impl TurnRequest {
    fn effect(&self, ordinal: u32) -> EffectId {
        EffectId {
            partition: self.partition,
            entry_id: self.entry_id.clone(),
            ordinal,
        }
    }

    /// Message id of the user's message (stable across re-runs).
    fn user_message_id(&self) -> String {
        format!("u{}-{}", self.partition, self.entry_id)
    }

    /// Message id of the agent's answer (stable across re-runs).
    fn answer_message_id(&self) -> String {
        format!("a{}-{}", self.partition, self.entry_id)
    }
}

/// A request to stop the running turn: the turn's `agent.idle` answers it.
#[derive(Debug, Clone)]
pub struct StopRequest {
    /// Device that asked.
    pub device_id: String,
    /// Its request id.
    pub request_id: Option<u64>,
}

/// Handles the chat actor keeps on a running turn.
#[derive(Debug, Clone, Default)]
pub struct TurnControl {
    /// Set to stop the turn at the next agent event.
    pub cancelled: Arc<AtomicBool>,
    /// Who asked for the stop, answered by the turn's `agent.idle`.
    pub stop_request: Arc<Mutex<Option<StopRequest>>>,
}

/// Runs one turn to its end (or its cancellation), writing every frame.
pub async fn run_turn(
    publisher: Publisher,
    scope: ChatScope,
    agent: Arc<dyn Agent>,
    request: TurnRequest,
    control: TurnControl,
) -> Result<(), PublishError> {
    let user_message = MessagePayload {
        message_id: Some(request.user_message_id()),
        role: Some(Role::User),
        text: Some(request.text.clone()),
        ts: Some(request.received_ms),
        ..Default::default()
    };
    let history = serde_json::to_value(&user_message).unwrap_or_default();
    publisher
        .emit(
            &scope,
            Outgoing::broadcast(ServerFrame::new(ServerBody::Message(user_message)))
                .once_as(request.effect(ordinal::USER_MESSAGE))
                .answering(&request.device_id, request.request_id)
                .with_history(history),
        )
        .await?;
    let busy = AgentBusy {
        reason: Some(BusyReason::Processing),
    };
    publisher
        .emit(
            &scope,
            Outgoing::broadcast(ServerFrame::new(ServerBody::AgentBusy(busy)))
                .once_as(request.effect(ordinal::BUSY)),
        )
        .await?;

    let message_id = request.answer_message_id();
    let start = MessageStart {
        message_id: Some(message_id.clone()),
        role: Some(Role::Assistant),
    };
    publisher
        .emit(
            &scope,
            Outgoing::broadcast(ServerFrame::new(ServerBody::MessageStart(start))),
        )
        .await?;

    let input = TurnInput {
        text: request.text.clone(),
        ..Default::default()
    };
    let mut events = agent.start(input).events;
    let mut text = String::new();
    let (mut model, mut tokens, mut failure) = (None, None, None);
    while let Some(event) = events.next().await {
        if control.cancelled.load(Ordering::Relaxed) {
            break;
        }
        match event {
            AgentEvent::TextDelta(delta) => {
                text.push_str(&delta);
                let update = MessageUpdate {
                    message_id: Some(message_id.clone()),
                    text: Some(text.clone()),
                };
                publisher
                    .emit(
                        &scope,
                        Outgoing::broadcast(ServerFrame::new(ServerBody::MessageUpdate(update))),
                    )
                    .await?;
            }
            AgentEvent::Done {
                model: done_model,
                tokens: done_tokens,
            } => {
                (model, tokens) = (done_model, done_tokens);
                break;
            }
            AgentEvent::Failed(reason) => {
                failure = Some(reason);
                break;
            }
            AgentEvent::Cancelled => break,
            _ => {}
        }
    }

    if let Some(reason) = failure {
        let error = ErrorPayload::new(ErrorCode::Internal, format!("the agent failed: {reason}"));
        publisher
            .emit(
                &scope,
                Outgoing::broadcast(ServerFrame::new(ServerBody::Error(error)))
                    .once_as(request.effect(ordinal::ERROR)),
            )
            .await?;
    }

    let stop = MessageStop {
        message_id: Some(message_id.clone()),
        final_text: Some(text.clone()),
        model: model.clone(),
        tokens,
        ..Default::default()
    };
    let answer = MessagePayload {
        message_id: Some(message_id),
        role: Some(Role::Assistant),
        text: Some(text),
        model,
        tokens,
        ts: Some(now_ms()),
        ..Default::default()
    };
    publisher
        .emit(
            &scope,
            Outgoing::broadcast(ServerFrame::new(ServerBody::MessageStop(stop)))
                .once_as(request.effect(ordinal::STOP))
                .with_history(serde_json::to_value(&answer).unwrap_or_default()),
        )
        .await?;

    let mut idle = Outgoing::broadcast(ServerFrame::new(ServerBody::AgentIdle(AgentIdle {})))
        .once_as(request.effect(ordinal::IDLE));
    let stop_request = control.stop_request.lock().ok().and_then(|mut s| s.take());
    if let Some(stop) = stop_request {
        idle = idle.answering(&stop.device_id, stop.request_id);
    }
    publisher.emit(&scope, idle).await
}
