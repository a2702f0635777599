//! The chat actor: one per active chat. It runs the chat's turns one at a time in inbound
//! order, answers `agent.stop` at once, and acknowledges each inbound entry only after its
//! effects are durable in Redis.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use deadpool_redis::Pool;

use iris_shared::inbound::InboundEntry;
use iris_shared::keys;
use iris_shared::outbox::EffectId;
use iris_shared::protocol::{
    parse_app_frame, AgentIdle, AppBody, ErrorCode, ErrorPayload, ServerBody, ServerFrame,
};

use crate::agent::Agent;
use crate::directory::{ChatKey, EntryDone, Fenced};
use crate::publisher::{ChatScope, Outgoing, PublishError, Publisher};
use crate::turn::{run_turn, StopRequest, TurnControl, TurnRequest, FINAL_ORDINAL};

/// Pause before retrying work that failed on Redis.
const RETRY_DELAY: Duration = Duration::from_secs(1);

/// An inbound entry for this chat, with the fencing token it was read under.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Work {
    /// The entry.
    pub entry: InboundEntry,
    /// Fencing token of the partition lease when the entry was read.
    pub fence: u64,
}

/// The directory retires this idle actor.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Retire;

/// A queued turn and the entry it acknowledges.
struct QueuedTurn {
    request: TurnRequest,
}

/// What the actor needs from its worker.
#[derive(Clone)]
pub struct ChatDeps {
    /// Redis pool (acknowledgements, effect checks).
    pub redis: Pool,
    /// Frame writer.
    pub publisher: Publisher,
    /// The upstream agent.
    pub agent: Arc<dyn Agent>,
    /// The directory, told when entries finish or the chat is fenced off.
    pub directory: Recipient<EntryDone>,
    /// The directory, told when this chat lost its partition.
    pub fenced: Recipient<Fenced>,
}

/// One active chat.
pub struct ChatActor {
    key: ChatKey,
    deps: ChatDeps,
    /// Highest fencing token seen; writes use it.
    fence: u64,
    /// Turns waiting, in inbound order.
    queue: VecDeque<QueuedTurn>,
    /// The running turn's controls and the stop entries it will answer.
    running: Option<(TurnControl, Vec<InboundEntry>)>,
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
        }
    }

    fn scope(&self) -> ChatScope {
        ChatScope {
            account: self.key.account.clone(),
            chat_id: self.key.chat_id.clone(),
            fence: self.fence,
        }
    }

    fn on_work(&mut self, entry: InboundEntry, ctx: &mut Context<Self>) {
        let Some(request) = entry.request.clone() else {
            self.acknowledge(vec![entry], ctx);
            return;
        };
        let frame = match parse_app_frame(&request.frame_json) {
            Ok(frame) => frame,
            Err(err) => {
                let error = err.to_error_frame();
                let outgoing = Outgoing::broadcast(error)
                    .once_as(effect(&entry, 0))
                    .only_to(&request.device_id);
                self.answer_then_ack(outgoing, entry, ctx);
                return;
            }
        };
        match frame.body {
            AppBody::MessageSend(send) => {
                self.queue.push_back(QueuedTurn {
                    request: TurnRequest {
                        partition: entry.partition,
                        entry_id: entry.entry_id.clone(),
                        device_id: request.device_id.clone(),
                        request_id: frame.id,
                        text: send.text.unwrap_or_default(),
                        received_ms: request.received_ms,
                    },
                });
                self.start_next_turn(ctx);
            }
            AppBody::AgentStop(_) => self.stop_turn(entry, request.device_id, frame.id, ctx),
            other => {
                let error = ErrorPayload::new(
                    ErrorCode::Unsupported,
                    format!("{} is not supported by this worker", other.type_name()),
                );
                let outgoing = Outgoing::broadcast(ServerFrame::new(ServerBody::Error(error)))
                    .once_as(effect(&entry, 0))
                    .answering(&request.device_id, frame.id)
                    .only_to(&request.device_id);
                self.answer_then_ack(outgoing, entry, ctx);
            }
        }
    }

    /// `agent.stop`: cancels the running turn (whose `agent.idle` then answers the stop),
    /// or answers with `agent.idle` at once when nothing runs.
    fn stop_turn(
        &mut self,
        entry: InboundEntry,
        device_id: String,
        request_id: Option<u64>,
        ctx: &mut Context<Self>,
    ) {
        if let Some((control, stop_entries)) = self.running.as_mut() {
            control.cancelled.store(true, Ordering::Relaxed);
            if let Ok(mut stop) = control.stop_request.lock() {
                *stop = Some(StopRequest {
                    device_id,
                    request_id,
                });
            }
            stop_entries.push(entry);
            return;
        }
        let idle = Outgoing::broadcast(ServerFrame::new(ServerBody::AgentIdle(AgentIdle {})))
            .once_as(effect(&entry, 0))
            .answering(&device_id, request_id)
            .only_to(&device_id);
        self.answer_then_ack(idle, entry, ctx);
    }

    fn answer_then_ack(
        &mut self,
        outgoing: Outgoing,
        entry: InboundEntry,
        ctx: &mut Context<Self>,
    ) {
        let publisher = self.deps.publisher.clone();
        let scope = self.scope();
        let retry_outgoing = outgoing.clone();
        let write = async move { publisher.emit(&scope, outgoing).await };
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

    fn start_next_turn(&mut self, ctx: &mut Context<Self>) {
        if self.running.is_some() {
            return;
        }
        let Some(queued) = self.queue.pop_front() else {
            return;
        };
        let control = TurnControl::default();
        self.running = Some((control.clone(), Vec::new()));
        let request = queued.request.clone();
        let (publisher, scope, agent, redis) = (
            self.deps.publisher.clone(),
            self.scope(),
            self.deps.agent.clone(),
            self.deps.redis.clone(),
        );
        let turn = async move {
            if turn_already_complete(&redis, &scope, &request).await? {
                return Ok(());
            }
            run_turn(publisher, scope, agent, request, control).await
        };
        ctx.spawn(turn.into_actor(self).map(move |result, act, ctx| {
            let stop_entries = act.running.take().map(|(_, entries)| entries).unwrap_or_default();
            match result {
                Ok(()) => {
                    let mut done = vec![turn_entry(&queued.request)];
                    done.extend(stop_entries);
                    act.acknowledge(done, ctx);
                    act.start_next_turn(ctx);
                }
                Err(PublishError::Fenced) => act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => {
                    tracing::warn!(%err, chat = %act.key.chat_id, "turn interrupted by Redis; retrying");
                    act.queue.push_front(queued);
                    for entry in stop_entries {
                        act.on_work(entry, ctx);
                    }
                    ctx.run_later(RETRY_DELAY, |act, ctx| act.start_next_turn(ctx));
                }
            }
        }));
    }

    /// Acknowledges finished entries; an entry whose acknowledgement fails stays pending
    /// and is handled again (idempotently) by whoever owns the partition next.
    fn acknowledge(&mut self, entries: Vec<InboundEntry>, ctx: &mut Context<Self>) {
        let redis = self.deps.redis.clone();
        let count = entries.len();
        let ack = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            let mut pipe = redis::pipe();
            for entry in &entries {
                pipe.cmd("XACK")
                    .arg(keys::inbound(entry.partition))
                    .arg(keys::WORKER_GROUP)
                    .arg(&entry.entry_id)
                    .ignore();
            }
            pipe.query_async::<()>(&mut conn)
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
        }));
    }

    fn fenced_off(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(chat = %self.key.chat_id, "a newer owner writes for this chat; stopping");
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

fn turn_entry(request: &TurnRequest) -> InboundEntry {
    InboundEntry {
        partition: request.partition,
        entry_id: request.entry_id.clone(),
        request: None,
    }
}

/// Whether an earlier attempt wrote the turn's final effect (then only the
/// acknowledgement was lost, and the turn must not stream again).
async fn turn_already_complete(
    redis: &Pool,
    scope: &ChatScope,
    request: &TurnRequest,
) -> Result<bool, PublishError> {
    let mut conn = redis.get().await?;
    let key =
        keys::AccountKeys::new(&scope.account).turn_effects(request.partition, &request.entry_id);
    Ok(redis::cmd("HEXISTS")
        .arg(key)
        .arg(FINAL_ORDINAL.to_string())
        .query_async(&mut conn)
        .await?)
}

impl Actor for ChatActor {
    type Context = Context<Self>;
}

impl Handler<Work> for ChatActor {
    type Result = ();

    fn handle(&mut self, msg: Work, ctx: &mut Self::Context) {
        self.fence = self.fence.max(msg.fence);
        self.on_work(msg.entry, ctx);
    }
}

impl Handler<Retire> for ChatActor {
    type Result = ();

    fn handle(&mut self, _msg: Retire, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
