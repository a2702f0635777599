//! Channel changes and read receipts, applied by the chat actor the request was routed
//! to: each is applied once (a request handled again after a takeover finds its effects
//! written) and broadcast to every device through the outbox, so offline devices catch up
//! with `sync`.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::channels::{self, ReadMark};
use iris_shared::clock::now_ms;
use iris_shared::inbound::{InboundEntry, InboundRequest};
use iris_shared::keys::AccountKeys;
use iris_shared::protocol::{
    AppBody, Channel, ChannelDeleted, ChannelKind, ChannelList, ChannelRenamed, ErrorCode,
    Notification, NotificationKind, ServerBody, ServerFrame,
};
use iris_shared::search;

use super::ChatActor;
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::{TurnWriter, FIRST_DYNAMIC_ORDINAL};
use crate::turn::TurnDeps;

/// A channel request that cannot be applied, and why (sent as an `error`).
struct Refusal {
    code: ErrorCode,
    message: String,
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// The frames a channel change writes: the first answers the request (and is written last,
/// under the effect ordinal of its place here).
type Frames = Vec<ServerBody>;

impl ChatActor {
    /// Applies a channel request or read receipt, then acknowledges its entry.
    pub(super) fn change_channels(
        &mut self,
        entry: InboundEntry,
        request: &InboundRequest,
        request_id: Option<u64>,
        body: AppBody,
        ctx: &mut Context<Self>,
    ) {
        let deps = self.deps.turn.clone();
        let scope = self.scope();
        let device = request.device_id.clone();
        let (partition, entry_id) = (entry.partition, entry.entry_id.clone());
        let account = scope.account.clone();
        let chat_id = scope.chat_id.clone();
        let work = async move {
            let effects = AccountKeys::new(&account).turn_effects(partition, &entry_id);
            let outcome = apply(&deps, &account, &chat_id, &effects, body).await?;
            let frames = match outcome {
                Ok(frames) => frames,
                Err(refusal) => return Ok(Some(refusal)),
            };
            let writer = TurnWriter::new(deps.publisher.clone(), scope, partition, entry_id);
            let mut frames = frames.into_iter();
            let answer = frames.next();
            // The answer goes last: a device that acts on it (sends into a thread it just
            // made) has every other frame of the change before those of its next request.
            for (ordinal, body) in (FIRST_DYNAMIC_ORDINAL + 1..).zip(frames) {
                let outgoing = Outgoing::broadcast(ServerFrame::new(body));
                writer.fixed(ordinal, outgoing).await?;
            }
            if let Some(answer) = answer {
                let outgoing = Outgoing::broadcast(ServerFrame::new(answer));
                let outgoing = outgoing.answering(&device, request_id);
                writer.fixed(FIRST_DYNAMIC_ORDINAL, outgoing).await?;
            }
            Ok::<_, PublishError>(None)
        };
        let request = request.clone();
        ctx.spawn(work.in_current_span().into_actor(self).map(
            move |result, act, ctx| match result {
                Ok(None) => act.acknowledge(vec![entry], ctx),
                Ok(Some(refusal)) => act.reject_request(
                    entry,
                    &request,
                    request_id,
                    refusal.code,
                    refusal.message,
                    ctx,
                ),
                Err(PublishError::Fenced) => act.fenced_off(ctx),
                Err(PublishError::Redis(err)) => {
                    tracing::warn!(%err, "channel change not applied; it will be handled again");
                }
            },
        ));
    }
}

async fn apply(
    deps: &TurnDeps,
    account: &str,
    chat_id: &str,
    effects: &str,
    body: AppBody,
) -> Result<Result<Frames, Refusal>, PublishError> {
    let mut conn = deps.redis.get().await?;
    let conn = &mut conn;
    Ok(match body {
        AppBody::ChannelCreate(create) => {
            let name = match channels::validate_name(create.name.as_deref().unwrap_or_default()) {
                Ok(name) => name,
                Err(why) => return Ok(Err(Refusal::new(ErrorCode::Unsupported, why))),
            };
            let thread = matches!(
                create.kind,
                Some(iris_shared::protocol::NewChannelKind::Thread)
            );
            let parent = if thread {
                match channels::get(conn, account, chat_id).await? {
                    Some(parent) if parent.kind != Some(ChannelKind::Thread) => {
                        Some(chat_id.to_owned())
                    }
                    _ => {
                        let why = format!("threads hang under a channel; {chat_id:?} is not one");
                        return Ok(Err(Refusal::new(ErrorCode::NotFound, why)));
                    }
                }
            } else {
                None
            };
            let kind = if thread {
                ChannelKind::Thread
            } else {
                ChannelKind::Channel
            };
            let number = channels::claim_number(conn, account, effects).await?;
            let channel = Channel {
                chat_id: Some(channels::created_chat_id(kind, number)),
                name: Some(name.clone()),
                kind: Some(kind),
                parent_chat_id: parent,
                is_default: Some(false),
                ..Default::default()
            };
            channels::put(conn, account, &channel).await?;
            Ok(vec![
                ServerBody::ChannelCreated(channel),
                notice(
                    NotificationKind::ChannelCreated,
                    format!("New {}: {name}", if thread { "thread" } else { "channel" }),
                ),
            ])
        }
        AppBody::ChannelRename(rename) => {
            let name = match channels::validate_name(rename.name.as_deref().unwrap_or_default()) {
                Ok(name) => name,
                Err(why) => return Ok(Err(Refusal::new(ErrorCode::Unsupported, why))),
            };
            let Some(mut channel) = channels::get(conn, account, chat_id).await? else {
                return Ok(Err(Refusal::new(
                    ErrorCode::NotFound,
                    format!("unknown chat {chat_id:?}"),
                )));
            };
            channel.name = Some(name.clone());
            channels::put(conn, account, &channel).await?;
            let renamed = ChannelRenamed {
                chat_id: Some(chat_id.to_owned()),
                name: Some(name.clone()),
            };
            Ok(vec![
                ServerBody::ChannelRenamed(renamed),
                notice(
                    NotificationKind::ChannelRenamed,
                    format!("Renamed to {name}"),
                ),
            ])
        }
        AppBody::ChannelSetDefault(_) => {
            let mut all = channels::list(conn, account).await?;
            if !all.iter().any(|c| c.chat_id.as_deref() == Some(chat_id)) {
                return Ok(Err(Refusal::new(
                    ErrorCode::NotFound,
                    format!("unknown chat {chat_id:?}"),
                )));
            }
            if all.iter().any(|c| {
                c.chat_id.as_deref() == Some(chat_id) && c.kind == Some(ChannelKind::Thread)
            }) {
                return Ok(Err(Refusal::new(
                    ErrorCode::Unsupported,
                    "a thread cannot be the default channel",
                )));
            }
            for channel in &mut all {
                let is_default = channel.chat_id.as_deref() == Some(chat_id);
                if channel.is_default != Some(is_default) {
                    channel.is_default = Some(is_default);
                    channels::put(conn, account, channel).await?;
                }
            }
            Ok(vec![ServerBody::ChannelList(ChannelList {
                channels: Some(all),
            })])
        }
        AppBody::ChannelDelete(_) => {
            let all = channels::list(conn, account).await?;
            let Some(channel) = all.iter().find(|c| c.chat_id.as_deref() == Some(chat_id)) else {
                return Ok(Err(Refusal::new(
                    ErrorCode::NotFound,
                    format!("unknown chat {chat_id:?}"),
                )));
            };
            if channel.is_default == Some(true) {
                return Ok(Err(Refusal::new(
                    ErrorCode::Unsupported,
                    "the default channel cannot be deleted; make another channel the default first",
                )));
            }
            let mut doomed: Vec<String> = all
                .iter()
                .filter(|c| c.parent_chat_id.as_deref() == Some(chat_id))
                .filter_map(|c| c.chat_id.clone())
                .collect();
            doomed.push(chat_id.to_owned());
            for doomed_chat in &doomed {
                delete_chat(conn, account, doomed_chat).await?;
            }
            let frames: Frames = doomed
                .into_iter()
                .rev()
                .map(|chat_id| {
                    ServerBody::ChannelDeleted(ChannelDeleted {
                        chat_id: Some(chat_id),
                    })
                })
                .collect();
            Ok(frames)
        }
        AppBody::ReadReceipt(receipt) => {
            let Some(message_id) = receipt.message_id.filter(|m| !m.is_empty()) else {
                return Ok(Err(Refusal::new(
                    ErrorCode::Unsupported,
                    "read.receipt needs a message_id",
                )));
            };
            match channels::mark_read(conn, account, chat_id, &message_id).await? {
                ReadMark::UnknownMessage => {
                    let why = format!("message {message_id:?} is not in chat {chat_id:?}");
                    return Ok(Err(Refusal::new(ErrorCode::NotFound, why)));
                }
                ReadMark::Moved | ReadMark::Unchanged => {}
            }
            let all = channels::list(conn, account).await?;
            Ok(vec![ServerBody::ChannelList(ChannelList {
                channels: Some(all),
            })])
        }
        other => {
            let why = format!("{} is not a channel request", other.type_name());
            Err(Refusal::new(ErrorCode::Unsupported, why))
        }
    })
}

/// Removes a chat and everything kept for it (history, settings, read marker, index).
async fn delete_chat(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    chat_id: &str,
) -> Result<(), PublishError> {
    channels::delete(conn, account, chat_id).await?;
    search::remove_chat(conn, account, chat_id).await?;
    Ok(())
}

fn notice(kind: NotificationKind, title: String) -> ServerBody {
    ServerBody::Notification(Notification {
        kind: Some(kind),
        title: Some(title),
        ts: Some(now_ms()),
        ..Default::default()
    })
}
