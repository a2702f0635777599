//! The pickers slash commands open: a model picker for `/model`, and a confirmation any
//! device can answer for the destructive `/new` and `/undo`.

use iris_shared::chat_settings;
use iris_shared::clock::now_ms;
use iris_shared::protocol::{ModelOption, ModelProvider, PickerConfirm, PickerModel, ServerBody};

use super::Reply;
use crate::turn::publisher::PublishError;
use crate::turn::TurnDeps;
use iris_shared::pickers::{self, PickerKind};

/// Picker ids of model pickers start with this.
pub const MODEL_PICKER_PREFIX: &str = "model-";
/// Picker ids of confirmations of destructive commands start with this.
pub const CONFIRM_PICKER_PREFIX: &str = "confirm-";
/// How long a model or confirmation picker stays answerable.
const PICKER_TTL_SECS: u64 = 3600;

/// Destructive commands (`/new`, `/undo`) first ask: a `picker.confirm` any device can
/// answer; "yes" (or confirm, ok) runs the command.
pub(super) async fn confirm_picker(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
    action: &str,
) -> Result<Reply, PublishError> {
    let picker_id = format!("{CONFIRM_PICKER_PREFIX}{action}-{}", now_ms());
    let extra = [(pickers::ACTION_FIELD, action)];
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
