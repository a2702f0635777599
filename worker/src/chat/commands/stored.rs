//! The commands served from the chat's state in Redis, with no running turn involved:
//! `/new`, `/undo`, `/retry`, `/reasoning`, `/model <name>`, `/title`.

use iris_shared::channels;
use iris_shared::protocol::{ChannelRenamed, Role, ServerBody};

use super::picker_openers::{confirm_picker, model_picker};
use super::{FollowUp, Reply};
use crate::turn::publisher::PublishError;
use crate::turn::TurnDeps;
use iris_shared::chat_settings::{self, CONTEXT_FROM, MODEL, REASONING};
use iris_shared::history;

/// Arguments that confirm a destructive command without asking (`/new yes`).
const CONFIRMATIONS: &[&str] = &["yes", "y", "confirm", "ok", "true"];

/// Commands served from Redis state (no running turn involved).
pub(super) async fn stored_command(
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
            let last = history::last_entry_id(&mut conn, account, chat_id).await?;
            let from = last.unwrap_or_else(|| "0-0".to_owned());
            chat_settings::store(&mut conn, account, chat_id, CONTEXT_FROM, &from).await?;
            Reply::text("Started a new conversation: the agent no longer sees the messages above.")
        }
        "reasoning" => {
            let settings = chat_settings::load(&mut conn, account, chat_id).await?;
            let show = match args.to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => !settings.show_reasoning,
            };
            let value = if show { "on" } else { "off" };
            chat_settings::store(&mut conn, account, chat_id, REASONING, value).await?;
            Reply::text(format!(
                "Reasoning is now {}.",
                if show { "shown" } else { "hidden" }
            ))
        }
        "model" if !args.is_empty() => {
            chat_settings::store(&mut conn, account, chat_id, MODEL, args).await?;
            Reply::text(format!("Model for this chat: {args}."))
        }
        "model" => model_picker(deps, &mut conn, account, chat_id).await?,
        "retry" => {
            let settings = chat_settings::load(&mut conn, account, chat_id).await?;
            let entries = history::recent(
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
            let entries = history::recent(&mut conn, account, chat_id, None, 10).await?;
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
                history::forget(&mut conn, account, chat_id, &removed).await?;
                Reply::text("Forgot the last exchange: the agent no longer sees it.")
            }
        }
        "title" if args.is_empty() => Reply::text("Usage: /title <name>"),
        "title" => rename_chat(&mut conn, account, chat_id, args).await?,
        other => Reply::text(format!("/{other} is not available here.")),
    };
    Ok(reply)
}

pub(super) fn is_confirmation(answer: &str) -> bool {
    CONFIRMATIONS.contains(&answer.trim().to_ascii_lowercase().as_str())
}

async fn rename_chat(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
    name: &str,
) -> Result<Reply, PublishError> {
    let mut channel = channels::get(conn, account, chat_id)
        .await?
        .unwrap_or_default();
    channel.chat_id = Some(chat_id.to_owned());
    channel.name = Some(name.to_owned());
    channels::put(conn, account, &channel).await?;
    let renamed = ChannelRenamed {
        chat_id: Some(chat_id.to_owned()),
        name: Some(name.to_owned()),
    };
    Ok(Reply {
        frames: vec![ServerBody::ChannelRenamed(renamed)],
        ..Reply::text(format!("Renamed this chat to {name:?}."))
    })
}
