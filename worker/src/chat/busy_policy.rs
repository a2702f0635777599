//! What a chat does with a message that arrives while its agent is busy, the busy policy
//! (server default `IRIS_BUSY_POLICY`, per chat `/busy`):
//!
//! - `queue`: the message waits; messages are answered one after another, in order;
//! - `interrupt`: once the queue notice is written, the running turn is stopped (as
//!   `agent.stop` does, ending visibly after the notice) and the message is answered next,
//!   with the interrupted exchange in its conversation;
//! - `steer`: the message is injected into the running turn where the upstream can take
//!   it, and is queued otherwise; a `notification` says which happened.
//!
//! In every case the message itself is shown at once (the gateway wrote it), and a queued
//! one is announced with `agent.busy {message_id, queued}`.

use std::future::Future;

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::inbound::InboundEntry;
use iris_shared::protocol::{AgentBusy, BusyReason, Notification, ServerBody, ServerFrame};

use super::commands::Reply;
use super::{effect, ChatActor};
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::ordinal;
use crate::turn::{user_message_of, TurnRequest};

/// What a message sent during a turn does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BusyPolicy {
    /// Wait for the running turn; answered in order.
    Queue,
    /// Stop the running turn; answered next.
    Interrupt,
    /// Steer the running turn where the upstream can; queued otherwise.
    Steer,
}

impl BusyPolicy {
    /// Its name, as `/busy` and `IRIS_BUSY_POLICY` take it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Queue => "queue",
            Self::Interrupt => "interrupt",
            Self::Steer => "steer",
        }
    }

    /// The policy named `name` (any case).
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Queue, Self::Interrupt, Self::Steer]
            .into_iter()
            .find(|policy| policy.name().eq_ignore_ascii_case(name.trim()))
    }

    /// What it means, for `/busy`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Queue => "messages sent while the agent works wait and are answered in order",
            Self::Interrupt => "a message sent while the agent works stops it and is answered next",
            Self::Steer => {
                "a message sent while the agent works steers it where the agent can, else waits"
            }
        }
    }
}

/// Effect ordinal of the `notification` saying whether a message steered the turn.
const STEER_NOTICE: u32 = 7;

impl ChatActor {
    /// `/busy [queue|interrupt|steer]`: shows or chooses the chat's policy (the choice is
    /// stored with the reply).
    pub(super) fn command_busy(&mut self, args: &str) -> Reply {
        if args.is_empty() {
            let policy = self.busy_policy();
            let source = if self.own_busy_policy.is_some() {
                "this chat's"
            } else {
                "the server's default"
            };
            return Reply::text(format!("Busy policy: {} ({source}): {}. Change it with /busy queue, /busy interrupt or /busy steer.", policy.name(), policy.describe()));
        }
        let Some(policy) = BusyPolicy::parse(args) else {
            return Reply::text("Usage: /busy queue|interrupt|steer");
        };
        self.own_busy_policy = Some(policy);
        Reply::text(format!(
            "Busy policy for this chat: {}: {}.",
            policy.name(),
            policy.describe()
        ))
    }

    /// The policy in force for this chat.
    pub(super) fn busy_policy(&self) -> BusyPolicy {
        self.own_busy_policy
            .unwrap_or(self.deps.default_busy_policy)
    }

    /// A turn to run for `entry`: at once when the agent is free, else as the policy says.
    pub(super) fn accept_turn(
        &mut self,
        turn: TurnRequest,
        entry: InboundEntry,
        ctx: &mut Context<Self>,
    ) {
        if self.running.is_none() {
            self.queue.push_back((turn, entry));
            self.start_next_turn(ctx);
            return;
        }
        match self.busy_policy() {
            BusyPolicy::Queue => self.queue_behind(turn, entry, ctx, AfterNotice::Nothing),
            // Stopped once the notice is written, so devices see it before the turn ends.
            BusyPolicy::Interrupt => {
                let running = self.running.as_ref().map(|r| r.message_id.clone());
                let after = running.map_or(AfterNotice::Nothing, AfterNotice::Interrupt);
                self.queue_behind(turn, entry, ctx, after)
            }
            BusyPolicy::Steer => self.steer_running(turn, entry, ctx),
        }
    }

    /// Queues the turn behind the running one and tells every device.
    fn queue_behind(
        &mut self,
        turn: TurnRequest,
        entry: InboundEntry,
        ctx: &mut Context<Self>,
        after: AfterNotice,
    ) {
        let answering = self.running.as_ref().map(|r| r.message_id.clone());
        self.queue.push_back((turn, entry.clone()));
        let Some(answering) = answering else {
            // The running turn ended meanwhile (a steer that came too late).
            self.start_next_turn(ctx);
            return;
        };
        let busy = AgentBusy {
            message_id: Some(answering),
            queued: Some(self.queued_message_ids()),
            ..AgentBusy::because(BusyReason::Processing)
        };
        let frame = ServerFrame::new(ServerBody::AgentBusy(busy));
        let notice = Outgoing::broadcast(frame).once_as(effect(&entry, ordinal::QUEUED));
        let queued = self.queue.back().map(|(turn, _)| turn.clone());
        let (deps, scope) = (self.deps.turn.clone(), self.scope());
        let write = async move {
            // The message is shown before the notice that lists it: its gateway may not have
            // written it yet (the worker read the entry first), or none will (a steer's text,
            // a slash-like text). Its effect id makes the later write of the two a no-op.
            if let Some(turn) = queued {
                deps.publisher
                    .emit(&scope, user_message_of(&deps, &scope, &turn).await?)
                    .await?;
            }
            deps.publisher.emit(&scope, notice).await
        };
        self.write_notice(write, ctx, after);
    }

    /// User message ids of the queued turns, in the order they will run.
    pub(super) fn queued_message_ids(&self) -> Vec<String> {
        self.queue
            .iter()
            .map(|(turn, _)| turn.user_message_id())
            .collect()
    }

    /// Stops the running turn the way `agent.stop` does: it ends with its partial answer.
    fn interrupt_running(&mut self, ctx: &mut Context<Self>) {
        let Some(run) = self.running.as_ref().and_then(|r| r.control.request_stop()) else {
            return;
        };
        ctx.spawn(
            async move {
                if let Err(err) = run.stop().await {
                    tracing::info!(%err, "upstream stop refused; the turn ends on its own");
                }
            }
            .into_actor(self),
        );
    }

    /// Injects the message into the running turn, or queues it where the upstream cannot
    /// take it; a `notification` for every device says which happened.
    fn steer_running(&mut self, turn: TurnRequest, entry: InboundEntry, ctx: &mut Context<Self>) {
        let run = self
            .running
            .as_ref()
            .and_then(|r| r.control.run_control())
            .filter(|_| self.deps.turn.agent.caps().steer);
        let Some(run) = run else {
            self.steer_notice(&entry, "Queued: the agent cannot be steered mid-turn", ctx);
            self.queue_behind(turn, entry, ctx, AfterNotice::Nothing);
            return;
        };
        let text = turn.text.clone();
        let steer = async move { run.steer(&text).await }.in_current_span();
        ctx.spawn(
            steer
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(()) => {
                        act.steer_notice(
                            &entry,
                            "Steering the running turn with your message",
                            ctx,
                        );
                        match act.running.as_mut() {
                            Some(running) => running.entries.push(entry),
                            None => act.acknowledge(vec![entry], ctx),
                        }
                    }
                    Err(err) => {
                        tracing::info!(%err, "steer refused; the message is queued");
                        act.steer_notice(
                            &entry,
                            "Queued: the running turn could not be steered",
                            ctx,
                        );
                        act.queue_behind(turn, entry, ctx, AfterNotice::Nothing);
                    }
                }),
        );
    }

    fn steer_notice(&mut self, entry: &InboundEntry, title: &str, ctx: &mut Context<Self>) {
        let notice = Notification::generic(title);
        let frame = ServerFrame::new(ServerBody::Notification(notice));
        let notice = Outgoing::broadcast(frame).once_as(effect(entry, STEER_NOTICE));
        let (publisher, scope) = (self.deps.turn.publisher.clone(), self.scope());
        let write = async move { publisher.emit(&scope, notice).await };
        self.write_notice(write, ctx, AfterNotice::Nothing);
    }

    /// Writes a notice about the chat's queue; the messages it is about will be answered
    /// (and shown, by the turn at the latest) whether it is written or not.
    fn write_notice(
        &mut self,
        write: impl Future<Output = Result<(), PublishError>> + 'static,
        ctx: &mut Context<Self>,
        after: AfterNotice,
    ) {
        let write = write.in_current_span();
        ctx.spawn(write.into_actor(self).map(move |result, act, ctx| {
            match result {
                Ok(()) => {}
                Err(PublishError::Fenced) => return act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => {
                    tracing::warn!(%err, "queue notice not written")
                }
            }
            let still_running = |id: &String| {
                act.running
                    .as_ref()
                    .is_some_and(|running| &running.message_id == id)
            };
            if let AfterNotice::Interrupt(answering) = &after {
                if still_running(answering) {
                    act.interrupt_running(ctx);
                }
            }
        }));
    }
}

/// What follows a queue notice once it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AfterNotice {
    Nothing,
    /// Stop the turn answering this message if it still runs (the interrupt policy).
    Interrupt(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_is_parsed_back_from_its_name_in_any_case() {
        for policy in [BusyPolicy::Queue, BusyPolicy::Interrupt, BusyPolicy::Steer] {
            assert_eq!(BusyPolicy::parse(policy.name()), Some(policy));
            assert_eq!(
                BusyPolicy::parse(&policy.name().to_uppercase()),
                Some(policy)
            );
        }
        assert_eq!(BusyPolicy::parse("later"), None);
    }
}
