//! Slash commands the chat actor serves itself. Every command message is echoed as the
//! user's `message` (answering the request) and answered with a `message` of role
//! `system`; commands that act on the running turn (`/stop`, `/steer`, `/approve`,
//! `/deny`) act at once, the others change the chat's settings or history.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::clock::now_ms;
use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::keys::AccountKeys;
use iris_shared::protocol::{
    Channel, ChannelRenamed, ErrorCode, MessagePayload, ModelOption, ModelProvider, Notification,
    PickerConfirm, PickerModel, Role, ServerBody, ServerFrame,
};

use super::BusyPolicy;
use super::ChatActor;
use crate::commands::{self, Invocation};
use crate::conversation::{self, BUSY_POLICY, CONTEXT_FROM, MODEL, REASONING};
use crate::pickers::{self, PickerKind};
use crate::publisher::{Outgoing, PublishError};
use crate::turn::{PendingAnswer, TurnDeps, TurnRequest};
use crate::turn_writer::TurnWriter;

/// Picker ids of model pickers start with this.
pub const MODEL_PICKER_PREFIX: &str = "model-";
/// Picker ids of confirmations of destructive commands start with this.
pub const CONFIRM_PICKER_PREFIX: &str = "confirm-";
/// Arguments that confirm a destructive command without asking (`/new yes`).
const CONFIRMATIONS: &[&str] = &["yes", "y", "confirm", "ok", "true"];
/// How long a model or confirmation picker stays answerable.
const PICKER_TTL_SECS: u64 = 3600;

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
    pub(super) fn run_command(
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
            "help" | "commands" => Some(Reply::text(commands::help_text())),
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
                conversation::store_setting(&mut conn, account, chat, BUSY_POLICY, policy.name())
                    .await?;
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
                        entry_id: format!("{}.retry", entry.entry_id),
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

    fn command_stop(&mut self, ctx: &mut Context<Self>) -> Reply {
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

    fn command_steer(&mut self, text: &str, ctx: &mut Context<Self>) -> Reply {
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

    fn command_approval(
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

    fn command_status(&self) -> Reply {
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

    /// `picker.select` on a model picker: stores the model for the chat and tells every
    /// device (closing the picker).
    pub(super) fn choose_model(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        picker_id: String,
        model: String,
        ctx: &mut Context<Self>,
    ) {
        let deps = self.deps.turn.clone();
        let scope = self.scope();
        let device = request.device_id.clone();
        let (partition, entry_id) = (entry.partition, entry.entry_id.clone());
        let work = async move {
            let mut conn = deps.redis.get().await?;
            let was_open: u32 = redis::cmd("DEL")
                .arg(AccountKeys::new(&scope.account).picker(&picker_id))
                .query_async(&mut conn)
                .await?;
            if was_open == 0 {
                return Ok(Some(picker_id));
            }
            conversation::store_setting(&mut conn, &scope.account, &scope.chat_id, MODEL, &model)
                .await?;
            let notice = Notification {
                picker_id: Some(picker_id),
                choice: Some(model.clone()),
                ..Notification::generic(format!("Model for this chat: {model}"))
            };
            let writer = TurnWriter::new(deps.publisher.clone(), scope, partition, entry_id);
            let outgoing = Outgoing::broadcast(ServerFrame::new(ServerBody::Notification(notice)))
                .answering(&device, request_id);
            writer.fixed(0, outgoing).await?;
            Ok::<_, PublishError>(None)
        };
        self.finish_picker_answer(
            entry,
            request,
            request_id,
            work,
            "model choice not stored",
            ctx,
        );
    }
}

impl ChatActor {
    /// `picker.select` on a confirmation: runs the confirmed command (or drops it) and
    /// tells every device, closing the picker.
    pub(super) fn confirm_action(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        picker_id: String,
        answer: String,
        ctx: &mut Context<Self>,
    ) {
        let deps = self.deps.turn.clone();
        let scope = self.scope();
        let device = request.device_id.clone();
        let running = self.running.is_some();
        let (partition, entry_id) = (entry.partition, entry.entry_id.clone());
        let work = async move {
            let mut conn = deps.redis.get().await?;
            let key = AccountKeys::new(&scope.account).picker(&picker_id);
            let (action, _): (Option<String>, ()) = redis::pipe()
                .atomic()
                .cmd("HGET")
                .arg(&key)
                .arg("action")
                .cmd("DEL")
                .arg(&key)
                .query_async(&mut conn)
                .await?;
            let Some(action) = action else {
                return Ok(Some(picker_id));
            };
            let confirmed = is_confirmation(&answer);
            let reply = if confirmed {
                stored_command(
                    &deps,
                    &scope.account,
                    &scope.chat_id,
                    &action,
                    "yes",
                    running,
                )
                .await?
            } else {
                Reply::text(format!("/{action} cancelled."))
            };
            let mut writer = TurnWriter::new(deps.publisher.clone(), scope, partition, entry_id);
            let notice = Notification {
                picker_id: Some(picker_id),
                choice: Some(if confirmed { "yes" } else { "no" }.to_owned()),
                ..Notification::generic(reply.text.clone())
            };
            let outgoing = Outgoing::broadcast(ServerFrame::new(ServerBody::Notification(notice)))
                .answering(&device, request_id);
            writer.fixed(0, outgoing).await?;
            for frame in &reply.frames {
                writer.broadcast(frame.clone()).await?;
            }
            Ok::<_, PublishError>(None)
        };
        self.finish_picker_answer(
            entry,
            request,
            request_id,
            work,
            "confirmation not handled",
            ctx,
        );
    }
}

impl ChatActor {
    /// Ends the handling of a `picker.select`: acknowledged once answered, or answered with
    /// `not_found` when the picker was no longer open (`work` returns its id then).
    fn finish_picker_answer(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        work: impl std::future::Future<Output = Result<Option<String>, PublishError>> + 'static,
        what: &'static str,
        ctx: &mut Context<Self>,
    ) {
        let request = request.clone();
        ctx.spawn(work.in_current_span().into_actor(self).map(
            move |result, act, ctx| match result {
                Ok(None) => act.acknowledge(vec![entry], ctx),
                Ok(Some(picker_id)) => {
                    let message =
                        format!("picker {picker_id:?} is not open (answered already, or expired)");
                    act.reject_request(
                        entry,
                        &request,
                        request_id,
                        ErrorCode::NotFound,
                        message,
                        ctx,
                    );
                }
                Err(PublishError::Fenced) => act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => tracing::warn!(%err, "{what}"),
            },
        ));
    }
}

/// Commands served from Redis state (no running turn involved).
async fn stored_command(
    deps: &TurnDeps,
    account: &str,
    chat_id: &str,
    name: &str,
    args: &str,
    running: bool,
) -> Result<Reply, PublishError> {
    let mut conn = deps.redis.get().await?;
    let reply = match name {
        "new" | "undo" if !is_confirmation(args) => {
            confirm_picker(&mut conn, account, chat_id, name).await?
        }
        "new" => {
            let last = conversation::last_history_id(&mut conn, account, chat_id).await?;
            let from = last.unwrap_or_else(|| "0-0".to_owned());
            conversation::store_setting(&mut conn, account, chat_id, CONTEXT_FROM, &from).await?;
            Reply::text("Started a new conversation: the agent no longer sees the messages above.")
        }
        "reasoning" => {
            let settings = conversation::load_settings(&mut conn, account, chat_id).await?;
            let show = match args.to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => !settings.show_reasoning,
            };
            let value = if show { "on" } else { "off" };
            conversation::store_setting(&mut conn, account, chat_id, REASONING, value).await?;
            Reply::text(format!(
                "Reasoning is now {}.",
                if show { "shown" } else { "hidden" }
            ))
        }
        "model" if !args.is_empty() => {
            conversation::store_setting(&mut conn, account, chat_id, MODEL, args).await?;
            Reply::text(format!("Model for this chat: {args}."))
        }
        "model" => model_picker(deps, &mut conn, account, chat_id).await?,
        "retry" => {
            let settings = conversation::load_settings(&mut conn, account, chat_id).await?;
            let entries = conversation::recent_history(
                &mut conn,
                account,
                chat_id,
                settings.context_from.as_deref(),
                50,
            )
            .await?;
            let last_user = entries
                .iter()
                .rev()
                .find(|e| e.message.role == Some(Role::User))
                .and_then(|e| e.message.text.clone());
            match last_user {
                Some(text) if !running => Reply {
                    follow_up: FollowUp::Turn(text),
                    ..Reply::text("Running your last message again.")
                },
                Some(_) => Reply::text("A turn is running; /retry once it has finished."),
                None => Reply::text("There is no message to retry."),
            }
        }
        "undo" => {
            let entries =
                conversation::recent_history(&mut conn, account, chat_id, None, 10).await?;
            let mut removed = Vec::new();
            for entry in entries.iter().rev() {
                removed.push(entry.entry_id.clone());
                if entry.message.role == Some(Role::User) {
                    break;
                }
            }
            if removed.is_empty() {
                Reply::text("There is nothing to undo.")
            } else {
                let _: () = redis::cmd("XDEL")
                    .arg(AccountKeys::new(account).history(chat_id))
                    .arg(&removed)
                    .query_async(&mut conn)
                    .await?;
                Reply::text("Forgot the last exchange: the agent no longer sees it.")
            }
        }
        "title" if args.is_empty() => Reply::text("Usage: /title <name>"),
        "title" => rename_chat(&mut conn, account, chat_id, args).await?,
        other => Reply::text(format!("/{other} is not available here.")),
    };
    Ok(reply)
}

fn is_confirmation(answer: &str) -> bool {
    CONFIRMATIONS.contains(&answer.trim().to_ascii_lowercase().as_str())
}

/// Destructive commands (`/new`, `/undo`) first ask: a `picker.confirm` any device can
/// answer; "yes" (or confirm, ok) runs the command.
async fn confirm_picker(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
    action: &str,
) -> Result<Reply, PublishError> {
    let picker_id = format!("{CONFIRM_PICKER_PREFIX}{action}-{}", now_ms());
    let extra = [("action", action)];
    pickers::open(
        conn,
        account,
        chat_id,
        &picker_id,
        PickerKind::Confirm,
        &extra,
        PICKER_TTL_SECS,
    )
    .await?;
    let message = match action {
        "new" => "The agent will no longer see the messages above.",
        _ => "The last exchange will be removed from the conversation.",
    };
    let confirm = PickerConfirm {
        picker_id: Some(picker_id),
        title: Some(format!("/{action}?")),
        message: Some(message.to_owned()),
    };
    Ok(Reply {
        frames: vec![ServerBody::PickerConfirm(confirm)],
        ..Reply::text(format!(
            "Confirm /{action} in the dialog (or send /{action} yes)."
        ))
    })
}

async fn model_picker(
    deps: &TurnDeps,
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
) -> Result<Reply, PublishError> {
    let settings = conversation::load_settings(conn, account, chat_id).await?;
    let models = match deps.agent.models().await {
        Ok(models) => models,
        Err(err) => {
            return Ok(Reply::text(format!(
                "The model list is not available: {err}"
            )))
        }
    };
    let picker_id = format!("{MODEL_PICKER_PREFIX}{}", now_ms());
    pickers::open(
        conn,
        account,
        chat_id,
        &picker_id,
        PickerKind::Model,
        &[],
        PICKER_TTL_SECS,
    )
    .await?;
    let current = settings.model.or_else(|| deps.agent.default_model());
    let picker = PickerModel {
        picker_id: Some(picker_id),
        current_model: current.clone(),
        current_provider: Some(deps.agent_name.clone()),
        providers: Some(vec![ModelProvider {
            id: Some(deps.agent_name.clone()),
            label: Some(deps.agent_name.clone()),
            models: Some(
                models
                    .into_iter()
                    .map(|model| ModelOption {
                        id: Some(model.id),
                        label: Some(model.label),
                    })
                    .collect(),
            ),
        }]),
    };
    Ok(Reply {
        frames: vec![ServerBody::PickerModel(picker)],
        ..Reply::text(format!(
            "Current model: {}. Pick another in the model picker.",
            current.as_deref().unwrap_or("the agent's default")
        ))
    })
}

async fn rename_chat(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
    name: &str,
) -> Result<Reply, PublishError> {
    let key = AccountKeys::new(account).channels();
    let stored: Option<String> = redis::cmd("HGET")
        .arg(&key)
        .arg(chat_id)
        .query_async(conn)
        .await?;
    let mut channel: Channel = stored
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default();
    channel.chat_id = Some(chat_id.to_owned());
    channel.name = Some(name.to_owned());
    let json = serde_json::to_string(&channel).unwrap_or_default();
    let _: () = redis::cmd("HSET")
        .arg(&key)
        .arg(chat_id)
        .arg(json)
        .query_async(conn)
        .await?;
    let renamed = ChannelRenamed {
        chat_id: Some(chat_id.to_owned()),
        name: Some(name.to_owned()),
    };
    Ok(Reply {
        frames: vec![ServerBody::ChannelRenamed(renamed)],
        ..Reply::text(format!("Renamed this chat to {name:?}."))
    })
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
