//! The pickers slash commands open (a model picker for `/model`, a confirmation for the
//! destructive `/new` and `/undo`) and the `picker.select` answers that close them.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::clock::now_ms;
use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::keys::AccountKeys;
use iris_shared::protocol::{
    ErrorCode, ModelOption, ModelProvider, Notification, PickerConfirm, PickerModel, ServerBody,
    ServerFrame,
};

use super::stored::{is_confirmation, stored_command};
use super::Reply;
use crate::chat::ChatActor;
use crate::pickers::{self, PickerKind};
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::TurnWriter;
use crate::turn::TurnDeps;
use iris_shared::chat_settings::{self, MODEL};

/// Picker ids of model pickers start with this.
pub const MODEL_PICKER_PREFIX: &str = "model-";
/// Picker ids of confirmations of destructive commands start with this.
pub const CONFIRM_PICKER_PREFIX: &str = "confirm-";
/// How long a model or confirmation picker stays answerable.
const PICKER_TTL_SECS: u64 = 3600;

impl ChatActor {
    /// `picker.select` on a model picker: stores the model for the chat and tells every
    /// device (closing the picker).
    pub(in crate::chat) fn choose_model(
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
            chat_settings::store(&mut conn, &scope.account, &scope.chat_id, MODEL, &model).await?;
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
    pub(in crate::chat) fn confirm_action(
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

/// Destructive commands (`/new`, `/undo`) first ask: a `picker.confirm` any device can
/// answer; "yes" (or confirm, ok) runs the command.
pub(super) async fn confirm_picker(
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

pub(super) async fn model_picker(
    deps: &TurnDeps,
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
) -> Result<Reply, PublishError> {
    let settings = chat_settings::load(conn, account, chat_id).await?;
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
