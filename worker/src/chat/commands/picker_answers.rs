//! The `picker.select` answers that close the pickers slash commands opened: a model
//! choice is stored for the chat, a confirmation runs (or drops) its command.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::pickers::{self, ACTION_FIELD};
use iris_shared::protocol::{ErrorCode, Notification, ServerBody, ServerFrame};

use super::stored::{is_confirmation, stored_command};
use super::Reply;
use crate::chat::ChatActor;
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::TurnWriter;
use iris_shared::chat_settings::{self, MODEL};

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
            if !pickers::close(&mut conn, &scope.account, &picker_id).await? {
                return Ok(Some(picker_id));
            }
            chat_settings::store(&mut conn, &scope.account, &scope.chat_id, MODEL, &model).await?;
            let writer = TurnWriter::new(deps.publisher.clone(), scope, partition, entry_id);
            let closed = Notification {
                picker_id: Some(picker_id),
                choice: Some(model.clone()),
                ..Notification::generic(format!("Model for this chat: {model}"))
            };
            write_closing_notice(&writer, closed, &device, request_id).await?;
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
            let action =
                pickers::take_field(&mut conn, &scope.account, &picker_id, ACTION_FIELD).await?;
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
            let closed = Notification {
                picker_id: Some(picker_id),
                choice: Some(if confirmed { "yes" } else { "no" }.to_owned()),
                ..Notification::generic(reply.text.clone())
            };
            write_closing_notice(&writer, closed, &device, request_id).await?;
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
                    let message = pickers::not_open_message(&picker_id);
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

/// Tells every device that the picker is closed and how, answering the `picker.select`.
async fn write_closing_notice(
    writer: &TurnWriter,
    closed: Notification,
    device_id: &str,
    request_id: Option<u64>,
) -> Result<(), PublishError> {
    let frame = ServerFrame::new(ServerBody::Notification(closed));
    let outgoing = Outgoing::broadcast(frame).answering(device_id, request_id);
    writer.fixed(0, outgoing).await
}
