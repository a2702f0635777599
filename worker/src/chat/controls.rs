//! The chat actor's controls of the running turn: `agent.stop`, `agent.steer` and
//! `picker.select` act on it at once, whatever is queued behind it.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::protocol::{AgentIdle, ErrorCode, Notification, ServerBody, ServerFrame};

use super::{commands, ChatActor};
use crate::agent::AgentError;
use crate::turn::publisher::Outgoing;
use crate::turn::{PendingAnswer, TurnRequest};

impl ChatActor {
    /// `agent.stop`: stops the running turn upstream (its `agent.idle` then answers the
    /// stop), or answers with `agent.idle` at once when nothing runs.
    pub(super) fn stop_turn(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        ctx: &mut Context<Self>,
    ) {
        if let Some(running) = self.running.as_mut() {
            if let Ok(mut stop) = running.control.stop_request.lock() {
                *stop = Some(PendingAnswer {
                    device_id: request.device_id.clone(),
                    request_id,
                });
            }
            running.entries.push(entry);
            if let Some(run) = running.control.request_stop() {
                ctx.spawn(
                    async move {
                        if let Err(err) = run.stop().await {
                            tracing::info!(%err, "upstream stop refused; the turn ends on its own");
                        }
                    }
                    .into_actor(self),
                );
            }
            return;
        }
        let idle = Outgoing::broadcast(ServerFrame::new(ServerBody::AgentIdle(AgentIdle {})))
            .answering(&request.device_id, request_id)
            .only_to(&request.device_id);
        self.answer_then_ack(idle, entry, ctx);
    }

    /// `agent.steer`: injects the text into the running turn where the upstream can; else
    /// (or when nothing runs) the text becomes the chat's next turn. Either way the device
    /// is told which, by a `notification` answering its request.
    pub(super) fn steer_turn(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        text: String,
        ctx: &mut Context<Self>,
    ) {
        if text.trim().is_empty() {
            let message = "agent.steer needs text".to_owned();
            self.reject_request(
                entry,
                request,
                request_id,
                ErrorCode::Unsupported,
                message,
                ctx,
            );
            return;
        }
        let Some(run) = self.running.as_ref().and_then(|r| r.control.run_control()) else {
            let turn = TurnRequest::new(&entry, request, request_id, text, Vec::new());
            self.accept_turn(turn, entry, ctx);
            return;
        };
        let steer = {
            let text = text.clone();
            async move { run.steer(&text).await }.in_current_span()
        };
        let request = request.clone();
        ctx.spawn(steer.into_actor(self).map(move |result, act, ctx| {
            let title = match result {
                Ok(()) => "Steering sent to the running turn".to_owned(),
                Err(AgentError::Unsupported(_)) | Err(AgentError::NotActive(_)) => {
                    // The steer's answer is this notice: the queued turn answers no request.
                    let queued = TurnRequest::new(&entry, &request, None, text, Vec::new());
                    act.queue.push_back((queued, entry));
                    act.notify(&request, request_id, "This agent cannot be steered mid-turn: your text is queued as the next turn", ctx);
                    return;
                }
                Err(err) => format!("Steering failed: {err}"),
            };
            act.notify(&request, request_id, &title, ctx);
            act.acknowledge(vec![entry], ctx);
        }));
    }

    /// Sends a generic notice to the requesting device, answering its request.
    pub(super) fn notify(
        &mut self,
        request: &InboundRequest,
        request_id: Option<u64>,
        title: &str,
        ctx: &mut Context<Self>,
    ) {
        let notice = Notification::generic(title);
        let outgoing = Outgoing::broadcast(ServerFrame::new(ServerBody::Notification(notice)))
            .answering(&request.device_id, request_id)
            .only_to(&request.device_id);
        let publisher = self.deps.turn.publisher.clone();
        let scope = self.scope();
        ctx.spawn(
            async move {
                if let Err(err) = publisher.emit(&scope, outgoing).await {
                    tracing::warn!(%err, "notice not written");
                }
            }
            .in_current_span()
            .into_actor(self),
        );
    }

    /// `picker.select`: answers an approval of the running turn. The resolution notice the
    /// turn writes when the upstream confirms answers the request (on every device).
    pub(super) fn select(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        picker_id: String,
        value: String,
        ctx: &mut Context<Self>,
    ) {
        if picker_id.starts_with(commands::MODEL_PICKER_PREFIX) {
            self.choose_model(entry, request, request_id, picker_id, value, ctx);
            return;
        }
        if picker_id.starts_with(commands::CONFIRM_PICKER_PREFIX) {
            self.confirm_action(entry, request, request_id, picker_id, value, ctx);
            return;
        }
        let control = self.running.as_ref().map(|r| r.control.clone());
        let approval = control.as_ref().and_then(|control| {
            let mut open = control.approvals.lock().ok()?;
            let approval = open.get_mut(&picker_id)?;
            approval.answered_by = Some(PendingAnswer {
                device_id: request.device_id.clone(),
                request_id,
            });
            Some(approval.approval_id.clone())
        });
        let (Some(control), Some(approval_id)) = (control, approval) else {
            let message = iris_shared::pickers::not_open_message(&picker_id);
            self.reject_request(
                entry,
                request,
                request_id,
                ErrorCode::NotFound,
                message,
                ctx,
            );
            return;
        };
        let Some(run) = control.run_control() else {
            return;
        };
        let request = request.clone();
        let approve = async move { run.approve(&approval_id, &value).await }.in_current_span();
        ctx.spawn(
            approve
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(()) => act.acknowledge(vec![entry], ctx),
                    Err(err) => {
                        if let Ok(mut open) = control.approvals.lock() {
                            if let Some(approval) = open.get_mut(&picker_id) {
                                approval.answered_by = None;
                            }
                        }
                        let message = err.to_string();
                        act.reject_request(
                            entry,
                            &request,
                            request_id,
                            ErrorCode::NotFound,
                            message,
                            ctx,
                        );
                    }
                }),
        );
    }
}
