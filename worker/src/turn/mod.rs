//! One agent turn for a `message.send`: the user's `message`, `agent.busy`,
//! `message.start`, then whatever the agent does (text, tools, approvals) as frames,
//! `message.stop`, `agent.idle`. The turn always ends with `message.stop` and
//! `agent.idle`, also when the upstream fails or is stopped: a phone never stays "busy".

pub mod attachments;
mod control;
pub mod conversation;
pub mod events;
pub mod interrupted;
pub mod publisher;
mod request;
pub mod writer;

pub use control::{Ending, PendingAnswer, TurnControl};
pub use request::{TurnDeps, TurnRequest, TurnStart};

use tracing::Instrument as _;

use futures_util::StreamExt;

use iris_shared::clock::now_ms;
use iris_shared::protocol::{
    AgentBusy, AgentIdle, BusyReason, ErrorCode, ErrorPayload, MessagePayload, MessageStart,
    MessageStop, Role, ServerBody, ServerFrame,
};
use iris_shared::user_message::UserMessage;

use crate::agent::{AgentEvent, TurnInput};
use crate::metrics;
use attachments::{attached_images, attached_media};
use events::TurnState;
use iris_shared::turn_opening::TurnOpening;
use publisher::{ChatScope, Outgoing, PublishError};
use writer::{ordinal, TurnWriter};

/// Runs one turn to its end (or its stop), writing every frame.
pub async fn run_turn(
    deps: TurnDeps,
    scope: ChatScope,
    request: TurnRequest,
    control: TurnControl,
    start: TurnStart,
) -> Result<(), PublishError> {
    let started = std::time::Instant::now();
    let _running = RunningTurnGauge::start();
    let mut writer = TurnWriter::new(
        deps.publisher.clone(),
        scope.clone(),
        request.partition,
        request.message_key.clone(),
    );
    if !start.user_message_written {
        let user_message = user_message_of(&deps, &scope, &request).await?;
        deps.publisher.emit(&scope, user_message).await?;
    }
    let busy = ServerBody::AgentBusy(AgentBusy {
        message_id: Some(request.user_message_id()),
        queued: Some(start.queued).filter(|queued| !queued.is_empty()),
        ..AgentBusy::because(BusyReason::Processing)
    });
    writer
        .fixed(ordinal::BUSY, Outgoing::broadcast(ServerFrame::new(busy)))
        .await?;

    let (input, show_reasoning) = turn_input(&deps, &scope, &request, start.opening).await?;
    let message_id = request.answer_message_id();
    let start = MessageStart {
        message_id: Some(message_id.clone()),
        role: Some(Role::Assistant),
    };
    writer.live(ServerBody::MessageStart(start)).await?;

    let upstream = iris_shared::traced_span!(
        "iris.upstream",
        otel.kind = "client",
        agent = %deps.agent_name
    );
    let run = upstream.in_scope(|| deps.agent.start(input.clone()));
    if let Ok(mut slot) = control.run.lock() {
        *slot = Some(run.control.clone());
    }
    if control.stop_requested() {
        // Stopped before the run had controls (an `agent.stop`, or an interrupting message,
        // came while the turn was starting): stop it now rather than waiting out the grace.
        let stop = run.control.stop();
        tokio::spawn(async move {
            if let Err(err) = stop.await {
                tracing::info!(%err, "upstream stop refused; the turn ends on its own");
            }
        });
    }
    let mut events = run.events;
    let mut state = TurnState::new(message_id.clone(), request.clone());
    let mut first_text = true;
    let ending = loop {
        let next = tokio::select! {
            event = events.next().instrument(upstream.clone()) => event,
            () = control.stop_deadline() => Some(AgentEvent::Cancelled),
        };
        let Some(event) = next else {
            break Ending::Failed("the agent ended the turn without finishing it".into());
        };
        if first_text && matches!(event, AgentEvent::TextDelta(_)) {
            first_text = false;
            metrics::get()
                .turn_first_token_seconds
                .observe(started.elapsed());
        }
        if let Some(ending) = state
            .apply(event, &mut writer, &deps.redis, &control)
            .await?
        {
            break ending;
        }
    };
    drop(events);
    drop(upstream);
    if let Ok(mut slot) = control.run.lock() {
        *slot = None;
    }
    let outcome = match &ending {
        Ending::Done { .. } => "ok",
        Ending::Failed(reason) => {
            metrics::incr(&metrics::get().upstream_errors_total);
            tracing::warn!(%reason, "agent turn failed");
            "error"
        }
        Ending::Cancelled => "stopped",
    };
    finish_turn(
        &mut writer,
        state,
        ending,
        show_reasoning,
        input.model,
        &control,
    )
    .await?;
    let stats = metrics::get();
    stats.turns_total.incr(outcome);
    stats.turn_duration_seconds.observe(started.elapsed());
    tracing::info!(
        outcome,
        elapsed_ms = started.elapsed().as_millis() as u64,
        chat = %scope.chat_id,
        "turn finished"
    );
    Ok(())
}

/// The user's message of `request` as the worker writes it when no gateway did.
pub async fn user_message_of(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<Outgoing, PublishError> {
    let message = UserMessage {
        partition: request.partition,
        key: &request.message_key,
        device_id: &request.device_id,
        request_id: request.request_id,
        text: &request.text,
        media: attached_media(&deps.redis, &scope.account, &request.media_ids).await?,
        received_ms: request.received_ms,
    };
    Ok(message.outgoing())
}

/// Counts a turn in `turns_running` while it lives.
struct RunningTurnGauge;

impl RunningTurnGauge {
    fn start() -> Self {
        metrics::shift(&metrics::get().turns_running, 1);
        Self
    }
}

impl Drop for RunningTurnGauge {
    fn drop(&mut self) {
        metrics::shift(&metrics::get().turns_running, -1);
    }
}

/// What the upstream needs: the conversation so far and the chat's model (read as the
/// turn began), and the attached images.
async fn turn_input(
    deps: &TurnDeps,
    scope: &ChatScope,
    request: &TurnRequest,
    opening: TurnOpening,
) -> Result<(TurnInput, bool), PublishError> {
    let TurnOpening {
        settings,
        conversation: entries,
        ..
    } = opening;
    let images = if request.media_ids.is_empty() {
        Vec::new()
    } else {
        let mut conn = deps.redis.get().await?;
        attached_images(&deps.media, &mut conn, &scope.account, &request.media_ids).await
    };
    let input = TurnInput {
        text: request.text.clone(),
        history: conversation::as_conversation(&entries, request.partition, &request.message_key),
        model: settings.model.or_else(|| deps.agent.default_model()),
        session_id: format!("iris-{}-{}", scope.account, scope.chat_id),
        turn_key: format!("iris-{}-{}", scope.account, request.answer_message_id()),
        images,
        media_ids: request.media_ids.clone(),
    };
    Ok((input, settings.show_reasoning))
}

/// Writes the end of every turn: an error if it failed, `message.stop` (also recorded in
/// history) and `agent.idle`.
async fn finish_turn(
    writer: &mut TurnWriter,
    state: TurnState,
    ending: Ending,
    show_reasoning: bool,
    chosen_model: Option<String>,
    control: &TurnControl,
) -> Result<(), PublishError> {
    let (model, tokens) = match &ending {
        Ending::Done { model, tokens } => (model.clone().or(chosen_model), *tokens),
        _ => (chosen_model, None),
    };
    if let Ending::Failed(reason) = &ending {
        let error = ErrorPayload::new(ErrorCode::Internal, format!("the agent failed: {reason}"));
        writer
            .fixed(
                ordinal::ERROR,
                Outgoing::broadcast(ServerFrame::new(ServerBody::Error(error))),
            )
            .await?;
    }
    let text = state.answer_text();
    let reasoning = Some(state.reasoning().to_owned()).filter(|r| show_reasoning && !r.is_empty());
    let stop = MessageStop {
        message_id: Some(state.message_id().to_owned()),
        final_text: Some(text.clone()),
        reasoning: reasoning.clone(),
        model: model.clone(),
        tokens,
        interrupted: None,
    };
    let answer = MessagePayload {
        message_id: Some(state.message_id().to_owned()),
        role: Some(Role::Assistant),
        media: Some(state.media().to_vec()).filter(|media| !media.is_empty()),
        text: Some(text),
        reasoning,
        model,
        tokens,
        ts: Some(now_ms()),
        ..Default::default()
    };
    writer
        .fixed(
            ordinal::STOP,
            Outgoing::broadcast(ServerFrame::new(ServerBody::MessageStop(stop)))
                .with_history(answer),
        )
        .await?;

    let mut idle = Outgoing::broadcast(ServerFrame::new(ServerBody::AgentIdle(AgentIdle {})));
    let stop_request = control.stop_request.lock().ok().and_then(|mut s| s.take());
    if let Some(stop) = stop_request {
        idle = idle.answering(&stop.device_id, stop.request_id);
    }
    writer.fixed(ordinal::IDLE, idle).await
}
