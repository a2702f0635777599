//! The commands that act on the running turn at once (`/stop`, `/steer`, `/approve`,
//! `/deny`) and `/status`, which describes it.

use actix::prelude::*;

use iris_shared::inbound::InboundRequest;

use super::catalog::Invocation;
use super::{FollowUp, Reply};
use crate::chat::ChatActor;
use crate::turn::PendingAnswer;

impl ChatActor {
    pub(super) fn command_stop(&mut self, ctx: &mut Context<Self>) -> Reply {
        let Some(running) = self.running.as_ref() else {
            return Reply::text("Nothing is running.");
        };
        if let Some(run) = running.control.request_stop() {
            ctx.spawn(
                async move {
                    let _ = run.stop().await;
                }
                .into_actor(self),
            );
        }
        Reply::text("Stopping the running turn.")
    }

    pub(super) fn command_steer(&mut self, text: &str, ctx: &mut Context<Self>) -> Reply {
        if text.is_empty() {
            return Reply::text("Usage: /steer <text>");
        }
        let Some(run) = self.running.as_ref().and_then(|r| r.control.run_control()) else {
            return Reply {
                follow_up: FollowUp::Turn(text.to_owned()),
                ..Reply::text("Nothing is running: your text starts the next turn.")
            };
        };
        if !self.deps.turn.agent.caps().steer {
            return Reply {
                follow_up: FollowUp::Turn(text.to_owned()),
                ..Reply::text(
                    "This agent cannot be steered mid-turn: your text is queued as the next turn.",
                )
            };
        }
        let text = text.to_owned();
        ctx.spawn(
            async move {
                if let Err(err) = run.steer(&text).await {
                    tracing::info!(%err, "steer refused");
                }
            }
            .into_actor(self),
        );
        Reply::text("Steering sent to the running turn.")
    }

    pub(super) fn command_approval(
        &mut self,
        invocation: &Invocation,
        request: &InboundRequest,
        ctx: &mut Context<Self>,
    ) -> Reply {
        let choice = match (invocation.spec.name, invocation.args.as_str()) {
            ("deny", _) => "deny".to_owned(),
            (_, "") => "once".to_owned(),
            (_, choice) => choice.to_ascii_lowercase(),
        };
        let Some(control) = self.running.as_ref().map(|r| r.control.clone()) else {
            return Reply::text("Nothing is waiting for approval.");
        };
        let pending = control.approvals.lock().ok().and_then(|mut open| {
            let (picker_id, approval) = open.iter_mut().next()?;
            approval.answered_by = Some(PendingAnswer {
                device_id: request.device_id.clone(),
                request_id: None,
            });
            Some((picker_id.clone(), approval.approval_id.clone()))
        });
        let (Some((_, approval_id)), Some(run)) = (pending, control.run_control()) else {
            return Reply::text("Nothing is waiting for approval.");
        };
        let answer = choice.clone();
        ctx.spawn(
            async move {
                if let Err(err) = run.approve(&approval_id, &answer).await {
                    tracing::info!(%err, "approval refused");
                }
            }
            .into_actor(self),
        );
        Reply::text(format!("Answered the pending approval: {choice}."))
    }

    pub(super) fn command_status(&self) -> Reply {
        let caps = self.deps.turn.agent.caps();
        let mut able = Vec::new();
        for (on, what) in [
            (caps.tools, "tools"),
            (caps.approvals, "approvals"),
            (caps.reasoning, "reasoning"),
            (caps.steer, "steering"),
        ] {
            if on {
                able.push(what);
            }
        }
        let running = if self.running.is_some() {
            "a turn is running"
        } else {
            "idle"
        };
        Reply::text(format!(
            "Agent: {} ({}). Chat {}: {running}, {} queued; busy policy {}.",
            self.deps.turn.agent_name,
            if able.is_empty() {
                "plain answers".to_owned()
            } else {
                able.join(", ")
            },
            self.key.chat_id,
            self.queue.len(),
            self.busy_policy().name(),
        ))
    }
}
