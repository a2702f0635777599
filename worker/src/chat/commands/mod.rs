//! Slash commands the chat actor serves itself. Every command message is echoed as the
//! user's `message` (answering the request) and answered with a `message` of role
//! `system`; commands that act on the running turn (`/stop`, `/steer`, `/approve`,
//! `/deny`) act at once, the others change the chat's settings or history.

pub mod catalog;
mod picker_answers;
mod picker_openers;
mod registry;
mod running_turn;
mod stored;

pub use picker_openers::{CONFIRM_PICKER_PREFIX, MODEL_PICKER_PREFIX};

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::clock::now_ms;
use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::protocol::{MessagePayload, Role, ServerBody, ServerFrame};

use super::BusyPolicy;
use super::ChatActor;
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::TurnWriter;
use crate::turn::TurnRequest;
use catalog::Invocation;
use iris_shared::chat_settings::{self, BUSY_POLICY};
use stored::stored_command;

/// What a command does after it has answered.
enum FollowUp {
    /// Nothing more.
    None,
    /// Run this text as the chat's next turn.
    Turn(String),
}

/// A command's answer: the system message and any frames to write after it.
pub(super) struct Reply {
    text: String,
    frames: Vec<ServerBody>,
    follow_up: FollowUp,
}

impl Reply {
    pub(super) fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            frames: Vec::new(),
            follow_up: FollowUp::None,
        }
    }
}

impl ChatActor {
    /// Serves a slash command sent as `message.send`.
    pub(in crate::chat) fn run_command(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        text: String,
        invocation: Invocation,
        ctx: &mut Context<Self>,
    ) {
        let immediate = match invocation.spec.name {
            "stop" => Some(self.command_stop(ctx)),
            "steer" => Some(self.command_steer(&invocation.args, ctx)),
            "approve" | "deny" => Some(self.command_approval(&invocation, request, ctx)),
            "help" | "commands" => Some(Reply::text(catalog::help_text())),
            "status" => Some(self.command_status()),
            "busy" => Some(self.command_busy(&invocation.args)),
            _ => None,
        };
        let deps = self.deps.turn.clone();
        let scope = self.scope();
        let args = invocation.args.clone();
        let name = invocation.spec.name;
        let running = self.running.is_some();
        let device_id = request.device_id.clone();
        let (partition, entry_id) = (entry.partition, entry.entry_id.clone());
        let chosen_busy_policy = (name == "busy").then(|| BusyPolicy::parse(&args)).flatten();
        let work = async move {
            if let Some(policy) = chosen_busy_policy {
                let mut conn = deps.redis.get().await?;
                let (account, chat) = (&scope.account, &scope.chat_id);
                chat_settings::store(&mut conn, account, chat, BUSY_POLICY, policy.name()).await?;
            }
            let reply = match immediate {
                Some(reply) => reply,
                None => {
                    stored_command(&deps, &scope.account, &scope.chat_id, name, &args, running)
                        .await?
                }
            };
            let echo = request_echo(&text, partition, &entry_id);
            let mut writer = TurnWriter::new(deps.publisher.clone(), scope, partition, entry_id);
            write_reply(&mut writer, &echo, &reply, &device_id, request_id).await?;
            Ok::<_, PublishError>(reply.follow_up)
        };
        let request = request.clone();
        ctx.spawn(work.in_current_span().into_actor(self).map(
            move |result, act, ctx| match result {
                Ok(FollowUp::Turn(text)) => {
                    let turn = TurnRequest {
                        partition: entry.partition,
                        message_key: format!("{}.retry", entry.entry_id),
                        device_id: request.device_id.clone(),
                        request_id: None,
                        text,
                        media_ids: Vec::new(),
                        received_ms: now_ms(),
                    };
                    act.queue.push_back((turn, entry));
                    act.start_next_turn(ctx);
                }
                Ok(FollowUp::None) => act.acknowledge(vec![entry], ctx),
                Err(PublishError::Fenced) => act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => {
                    tracing::warn!(%err, "command not answered; it will be handled again");
                }
            },
        ));
    }
}

/// The user's command, echoed as their message (not kept in the conversation).
fn request_echo(text: &str, partition: u32, entry_id: &str) -> MessagePayload {
    MessagePayload {
        message_id: Some(iris_shared::user_message::user_message_id(
            partition, entry_id,
        )),
        role: Some(Role::User),
        text: Some(text.to_owned()),
        ts: Some(now_ms()),
        ..Default::default()
    }
}

/// Writes the echo (answering the request), the system reply, then the reply's frames.
async fn write_reply(
    writer: &mut TurnWriter,
    echo: &MessagePayload,
    reply: &Reply,
    device_id: &str,
    request_id: Option<u64>,
) -> Result<(), PublishError> {
    writer
        .fixed(
            0,
            Outgoing::broadcast(ServerFrame::new(ServerBody::Message(echo.clone())))
                .answering(device_id, request_id),
        )
        .await?;
    let system = MessagePayload {
        message_id: Some(format!("{}-r", echo.message_id.clone().unwrap_or_default())),
        role: Some(Role::System),
        text: Some(reply.text.clone()),
        ts: Some(now_ms()),
        ..Default::default()
    };
    writer
        .fixed(
            1,
            Outgoing::broadcast(ServerFrame::new(ServerBody::Message(system))),
        )
        .await?;
    for frame in &reply.frames {
        writer.broadcast(frame.clone()).await?;
    }
    Ok(())
}
