//! The chat actor: one per active chat. It runs the chat's turns one at a time in inbound
//! order (a `message.send` that arrives during a turn waits for it), applies control
//! requests (`agent.stop`, `agent.steer`, `picker.select`) to the running turn at once, and
//! acknowledges each inbound entry only after its effects are durable in Redis.
//! A turn an earlier attempt began is ended as interrupted rather than re-run
//! (`turn_interrupted`). On drain it starts no more turns and reports when the running
//! one has ended and been acknowledged; queued turns stay pending for the next owner.
//! Slash commands are served by `commands.rs` beside this file.

mod busy_policy;
mod channels;
mod commands;
mod controls;
pub mod directory;
mod messages;
mod server_api;

use server_api::QueuedServerRequest;

pub use busy_policy::BusyPolicy;

use std::collections::VecDeque;
use std::time::Duration;

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::inbound::{self, InboundBody, InboundEntry, InboundRequest};
use iris_shared::outbox::EffectId;
use iris_shared::protocol::{AppBody, ErrorCode, ErrorPayload, ServerBody, ServerFrame};
use iris_shared::telemetry::propagation;

use crate::turn::interrupted::{
    end_answered_turn, end_interrupted_turn, turn_progress, TurnProgress,
};
use crate::turn::publisher::{ChatScope, Outgoing, PublishError};
use crate::turn::{run_turn, TurnControl, TurnDeps, TurnRequest, TurnStart};
use iris_shared::chat_settings;
use messages::{ChatKey, EntryDone, Fenced};
pub use messages::{FinishRunningTurn, Retire, Work};

/// Effect ordinal of a request's one answer (a request that is no turn has no other effect).
const ANSWER_ORDINAL: u32 = 0;

/// Pause before retrying work that failed on Redis.
const RETRY_DELAY: Duration = Duration::from_secs(1);

/// What the actor needs from its worker.
#[derive(Clone)]
pub struct ChatDeps {
    /// Publisher, Redis and agent, shared with the turns.
    pub turn: TurnDeps,
    /// The directory, told when entries finish.
    pub directory: Recipient<EntryDone>,
    /// The directory, told when this chat lost its partition.
    pub fenced: Recipient<Fenced>,
    /// The busy policy of chats that chose none (`IRIS_BUSY_POLICY`).
    pub default_busy_policy: BusyPolicy,
}

/// The turn running now.
struct RunningTurn {
    /// The user message it answers.
    message_id: String,
    control: TurnControl,
    /// Entries answered by the end of this turn (its own, and `agent.stop`s).
    entries: Vec<InboundEntry>,
}

/// One active chat.
pub struct ChatActor {
    key: ChatKey,
    deps: ChatDeps,
    /// Highest fencing token seen; writes use it.
    fence: u64,
    /// Turns waiting, in inbound order.
    queue: VecDeque<(TurnRequest, InboundEntry)>,
    /// The running turn, if any.
    running: Option<RunningTurn>,
    /// The parent channel, if this chat is a thread.
    thread_parent: Option<String>,
    /// The chat's own busy policy (`/busy`), if it chose one.
    own_busy_policy: Option<BusyPolicy>,
    /// Set by [`FinishRunningTurn`]: no more turns start.
    draining: bool,
    /// Acknowledgements sent and not yet answered.
    acks_in_flight: usize,
    /// Server API requests waiting to be written, in inbound order (`server_api.rs`).
    server_requests: VecDeque<QueuedServerRequest>,
    /// A server API request is being written.
    writing_server_request: bool,
    /// Told when a drain may go on (the running turn ended and is acknowledged).
    drain_waiters: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl ChatActor {
    /// An actor for `key`.
    pub fn new(key: ChatKey, deps: ChatDeps) -> Self {
        Self {
            key,
            deps,
            fence: 0,
            queue: VecDeque::new(),
            running: None,
            thread_parent: None,
            own_busy_policy: None,
            draining: false,
            acks_in_flight: 0,
            server_requests: VecDeque::new(),
            writing_server_request: false,
            drain_waiters: Vec::new(),
        }
    }

    fn scope(&self) -> ChatScope {
        ChatScope {
            account: self.key.account.clone(),
            chat_id: self.key.chat_id.clone(),
            fence: Some(self.fence),
            thread_parent: self.thread_parent.clone(),
        }
    }

    fn on_work(&mut self, entry: InboundEntry, ctx: &mut Context<Self>) {
        let Some(request) = entry.request.clone() else {
            self.acknowledge(vec![entry], ctx);
            return;
        };
        let frame = match entry.body.as_ref() {
            InboundBody::App(frame) => frame.clone(),
            InboundBody::Server(server_request) => {
                let server_request = server_request.clone();
                self.serve_server_request(entry, request.received_ms, server_request, ctx);
                return;
            }
            InboundBody::Invalid(err) => {
                let outgoing =
                    Outgoing::broadcast(err.to_error_frame()).only_to(&request.device_id);
                self.answer_then_ack(outgoing, entry, ctx);
                return;
            }
            InboundBody::Unreadable => {
                tracing::warn!(id = %entry.entry_id, "unreadable inbound entry dropped");
                self.acknowledge(vec![entry], ctx);
                return;
            }
        };
        match frame.body {
            AppBody::MessageSend(ref send) => {
                let text = send.text.clone().unwrap_or_default();
                let media_ids = send.media_refs.clone().unwrap_or_default();
                match commands::catalog::parse(&text) {
                    Some(invocation) => {
                        self.run_command(entry, &request, frame.id, text, invocation, ctx)
                    }
                    None => {
                        let turn = TurnRequest::new(&entry, &request, frame.id, text, media_ids);
                        self.accept_turn(turn, entry, ctx);
                    }
                }
            }
            body @ (AppBody::ChannelCreate(_)
            | AppBody::ChannelRename(_)
            | AppBody::ChannelSetDefault(_)
            | AppBody::ChannelDelete(_)
            | AppBody::ReadReceipt(_)) => {
                self.change_channels(entry, &request, frame.id, body, ctx);
            }
            AppBody::CommandsCatalog(_) => {
                let body = ServerBody::CommandsCatalog(commands::catalog::catalog());
                self.answer_request(entry, &request, frame.id, body, ctx);
            }
            AppBody::CommandsComplete(ref complete) => {
                let prefix = complete.prefix.clone().unwrap_or_default();
                let body = ServerBody::CommandsComplete(commands::catalog::complete(&prefix));
                self.answer_request(entry, &request, frame.id, body, ctx);
            }
            AppBody::AgentStop(_) => self.stop_turn(entry, &request, frame.id, ctx),
            AppBody::AgentSteer(ref steer) => {
                let text = steer.text.clone().unwrap_or_default();
                self.steer_turn(entry, &request, frame.id, text, ctx);
            }
            AppBody::PickerSelect(ref select) => {
                let picker_id = select.picker_id.clone().unwrap_or_default();
                let value = select.value.clone().unwrap_or_default();
                self.select(entry, &request, frame.id, picker_id, value, ctx);
            }
            ref other => {
                let message = format!("{} is not supported by this worker", other.type_name());
                let id = frame.id;
                self.reject_request(entry, &request, id, ErrorCode::Unsupported, message, ctx);
            }
        }
    }

    /// Answers a request with `body`, for the requesting device only.
    fn answer_request(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        body: ServerBody,
        ctx: &mut Context<Self>,
    ) {
        let outgoing = Outgoing::broadcast(ServerFrame::new(body))
            .answering(&request.device_id, request_id)
            .only_to(&request.device_id);
        self.answer_then_ack(outgoing, entry, ctx);
    }

    /// Answers a request with an `error` for the requesting device only.
    fn reject_request(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        code: ErrorCode,
        message: String,
        ctx: &mut Context<Self>,
    ) {
        let body = ServerBody::Error(ErrorPayload::new(code, message));
        self.answer_request(entry, request, request_id, body, ctx);
    }

    fn answer_then_ack(
        &mut self,
        outgoing: Outgoing,
        entry: InboundEntry,
        ctx: &mut Context<Self>,
    ) {
        let publisher = self.deps.turn.publisher.clone();
        let scope = self.scope();
        let outgoing = outgoing.once_as(effect(&entry, ANSWER_ORDINAL));
        let retry_outgoing = outgoing.clone();
        let write = async move { publisher.emit(&scope, outgoing).await }.in_current_span();
        ctx.spawn(
            write
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(()) => act.acknowledge(vec![entry], ctx),
                    Err(PublishError::Fenced) => act.fenced_off(ctx),
                    Err(PublishError::Redis(err)) => {
                        tracing::warn!(%err, "answer not written; retrying");
                        ctx.run_later(RETRY_DELAY, move |act, ctx| {
                            act.answer_then_ack(retry_outgoing, entry, ctx)
                        });
                    }
                }),
        );
    }

    /// Lets a drain go on once nothing runs and nothing waits for an acknowledgement.
    fn release_drain_if_settled(&mut self) {
        if self.draining && self.running.is_none() && self.acks_in_flight == 0 {
            for waiter in self.drain_waiters.drain(..) {
                let _ = waiter.send(());
            }
        }
    }

    fn start_next_turn(&mut self, ctx: &mut Context<Self>) {
        if self.running.is_some() {
            return;
        }
        if self.draining {
            self.release_drain_if_settled();
            return;
        }
        let Some((request, entry)) = self.queue.pop_front() else {
            return;
        };
        let control = TurnControl::default();
        self.running = Some(RunningTurn {
            message_id: request.user_message_id(),
            control: control.clone(),
            entries: vec![entry.clone()],
        });
        let queued = self.queued_message_ids();
        let (deps, scope) = (self.deps.turn.clone(), self.scope());
        let span =
            iris_shared::traced_span!("iris.turn", chat = %scope.chat_id, entry = %entry.entry_id);
        propagation::continue_trace(&span, trace_parent(&entry));
        let turn_request = request.clone();
        let turn = async move {
            let (progress, opening) = turn_progress(&deps, &scope, &turn_request).await?;
            let user_message_written = match progress {
                TurnProgress::Complete => return Ok(()),
                TurnProgress::StartedTools => {
                    return end_interrupted_turn(&deps, &scope, &turn_request).await
                }
                TurnProgress::Answered => {
                    return end_answered_turn(&deps, &scope, &turn_request).await
                }
                TurnProgress::StartedWithoutTools => {
                    tracing::info!(
                        chat = %scope.chat_id,
                        message_key = %turn_request.message_key,
                        "turn begun by an earlier attempt had started no tool: running it again"
                    );
                    true
                }
                TurnProgress::NotStarted {
                    user_message_written,
                } => user_message_written,
            };
            let start = TurnStart {
                user_message_written,
                queued,
                opening,
            };
            run_turn(deps, scope, turn_request, control, start).await
        };
        ctx.spawn(turn.instrument(span).into_actor(self).map(move |result, act, ctx| {
            let entries = act.running.take().map(|r| r.entries).unwrap_or_default();
            match result {
                Ok(()) => {
                    act.acknowledge(entries, ctx);
                    act.start_next_turn(ctx);
                }
                Err(PublishError::Fenced) => act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => {
                    tracing::warn!(%err, chat = %act.key.chat_id, "turn interrupted by Redis; retrying");
                    act.queue.push_front((request, entry));
                    for other in entries.into_iter().skip(1) {
                        act.on_work(other, ctx);
                    }
                    ctx.run_later(RETRY_DELAY, |act, ctx| act.start_next_turn(ctx));
                }
            }
        }));
    }

    /// Acknowledges finished entries; an entry whose acknowledgement fails stays pending
    /// and is handled again (idempotently) by whoever owns the partition next.
    fn acknowledge(&mut self, entries: Vec<InboundEntry>, ctx: &mut Context<Self>) {
        let redis = self.deps.turn.redis.clone();
        let count = entries.len();
        self.acks_in_flight += 1;
        let ack = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            inbound::acknowledge(&mut conn, &entries)
                .await
                .map_err(|err| err.to_string())
        };
        let key = self.key.clone();
        ctx.spawn(ack.into_actor(self).map(move |result, act, _ctx| {
            if let Err(err) = result {
                tracing::warn!(%err, "acknowledgement failed; the entry will be handled again");
            }
            for _ in 0..count {
                act.deps.directory.do_send(EntryDone { key: key.clone() });
            }
            act.acks_in_flight -= 1;
            act.release_drain_if_settled();
        }));
    }

    fn fenced_off(&mut self, ctx: &mut Context<Self>) {
        tracing::warn!(
            account = %self.key.account,
            chat = %self.key.chat_id,
            fence = self.fence,
            "chat stopped: a newer owner writes for it (its writes are refused)"
        );
        self.deps.fenced.do_send(Fenced {
            key: self.key.clone(),
        });
        ctx.stop();
    }
}

fn effect(entry: &InboundEntry, ordinal: u32) -> EffectId {
    EffectId {
        partition: entry.partition,
        entry_id: entry.entry_id.clone(),
        ordinal,
    }
}

impl Actor for ChatActor {
    type Context = Context<Self>;

    /// Learns whether the chat is a thread, and its busy policy, before handling any work,
    /// so every frame is scoped right.
    fn started(&mut self, ctx: &mut Self::Context) {
        let redis = self.deps.turn.redis.clone();
        let key = self.key.clone();
        let lookup = async move {
            let mut conn = redis.get().await.ok()?;
            let channel = iris_shared::channels::get(&mut conn, &key.account, &key.chat_id)
                .await
                .ok()
                .flatten();
            let settings = chat_settings::load(&mut conn, &key.account, &key.chat_id)
                .await
                .ok();
            Some((
                channel.and_then(|c| c.parent_chat_id),
                settings.and_then(|s| s.busy_policy),
            ))
        };
        ctx.wait(lookup.into_actor(self).map(|found, act, _ctx| {
            let (parent, busy) = found.unwrap_or_default();
            act.thread_parent = parent;
            act.own_busy_policy = busy.as_deref().and_then(BusyPolicy::parse);
        }));
    }
}

impl Handler<Work> for ChatActor {
    type Result = ();

    /// Handles the entry inside a span that continues the gateway's trace of the request;
    /// the work this spawns carries it on (`in_current_span`).
    fn handle(&mut self, msg: Work, ctx: &mut Self::Context) {
        self.fence = self.fence.max(msg.fence);
        let span = iris_shared::traced_span!(
            "iris.work",
            otel.kind = "consumer",
            messaging.system = "redis",
            messaging.operation.type = "process",
            request = msg.entry.body.type_name(),
            chat = %self.key.chat_id,
            entry = %msg.entry.entry_id,
        );
        propagation::continue_trace(&span, trace_parent(&msg.entry));
        let _entered = span.enter();
        self.on_work(msg.entry, ctx);
    }
}

/// The `traceparent` the gateway wrote with the entry.
fn trace_parent(entry: &InboundEntry) -> Option<&str> {
    entry.request.as_ref()?.trace_parent.as_deref()
}

impl Handler<FinishRunningTurn> for ChatActor {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _msg: FinishRunningTurn, _ctx: &mut Self::Context) -> Self::Result {
        self.draining = true;
        let (settled, wait) = tokio::sync::oneshot::channel();
        self.drain_waiters.push(settled);
        self.release_drain_if_settled();
        // A stopped actor drops the sender: nothing more to wait for either.
        Box::pin(async move {
            let _ = wait.await;
        })
    }
}

impl Handler<Retire> for ChatActor {
    type Result = ();

    fn handle(&mut self, _msg: Retire, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
