//! Writing one frame of a chat: atomically to the account's outbox (seq, fence,
//! de-duplication, history and its search entry) and live on the account's channel (to the
//! gateway nodes holding its devices) in one script, then, for the frames that have one,
//! its push job.
//!
//! Workers write every frame of the chats they own this way, fenced by their partition
//! lease. A gateway writes one kind of frame itself, unfenced: the user's own message of a
//! `message.send`, which the request alone determines (whoever writes it first, gateway or
//! worker, writes the same frame as the same effect, so it is written once).

use tracing::Instrument as _;

use crate::clock::{now_ms, now_us};
use crate::delivery::RoutedFrame;
use crate::outbox::{self, Append, AppendOutcome, EffectId};
use crate::protocol::{MessagePayload, ServerFrame};
use crate::push::{self, push_for, PushJob};
use crate::redis_conn::{Connection, PoolError};
use crate::search::IndexedMessage;

/// Why a frame could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// A newer owner of the chat's partition has written; this worker must stop the chat.
    #[error("fenced off: a newer owner writes for this chat")]
    Fenced,
    /// Redis failed; the write may be retried (effects are de-duplicated).
    #[error("Redis: {0}")]
    Redis(String),
}

impl From<redis::RedisError> for PublishError {
    fn from(err: redis::RedisError) -> Self {
        Self::Redis(err.to_string())
    }
}

impl From<PoolError> for PublishError {
    fn from(err: PoolError) -> Self {
        Self::Redis(err.to_string())
    }
}

/// The chat a frame is written for, and the writer's fencing token.
#[derive(Debug, Clone)]
pub struct ChatScope {
    /// Account of the chat.
    pub account: String,
    /// The chat.
    pub chat_id: String,
    /// Fencing token of the partition lease the writing worker holds; `None` for a frame
    /// its request alone determines (the user's message), which any node may write.
    pub fence: Option<u64>,
    /// For a thread, its parent channel: frames then carry `chat_id` = the parent and
    /// `thread_id` = the thread.
    pub thread_parent: Option<String>,
}

/// One frame to write, with its addressing.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The frame (its `id` and `seq` are set per device at delivery).
    pub frame: ServerFrame,
    /// Identity of the effect, for frames caused by an inbound entry.
    pub effect: Option<EffectId>,
    /// Device whose request this answers.
    pub origin_device: Option<String>,
    /// The request id that device's copy carries.
    pub request_id: Option<u64>,
    /// Only this device gets the frame.
    pub target_device: Option<String>,
    /// A finished message to add to the chat history.
    pub history: Option<MessagePayload>,
}

impl Outgoing {
    /// A frame for every device of the account, not tied to an effect.
    pub fn broadcast(frame: ServerFrame) -> Self {
        Self {
            frame,
            effect: None,
            origin_device: None,
            request_id: None,
            target_device: None,
            history: None,
        }
    }

    /// Marks the frame as effect `effect`, written at most once.
    pub fn once_as(mut self, effect: EffectId) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Marks the frame as the answer to request `request_id` of `device`.
    pub fn answering(mut self, device: &str, request_id: Option<u64>) -> Self {
        self.origin_device = Some(device.to_owned());
        self.request_id = request_id;
        self
    }

    /// Sends the frame to `device` only.
    pub fn only_to(mut self, device: &str) -> Self {
        self.target_device = Some(device.to_owned());
        self
    }

    /// Records a finished message in the chat history with the frame.
    pub fn with_history(mut self, message: MessagePayload) -> Self {
        self.history = Some(message);
        self
    }
}

/// What writing a frame did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// The frame was appended to the outbox now (not live-only, not written before).
    pub appended: bool,
}

/// A history entry as the search index takes it (messages without text are not indexed).
fn searchable(scope: &ChatScope, message: &MessagePayload) -> Option<IndexedMessage> {
    Some(IndexedMessage {
        chat_id: scope.chat_id.clone(),
        thread_id: None,
        message_id: message.message_id.clone()?,
        role: message.role?,
        text: message.text.clone().filter(|text| !text.is_empty())?,
        ts: message.ts.unwrap_or_else(now_ms),
    })
}

/// Writes one frame: outbox (never-dropped frames) then live delivery. A frame an earlier
/// attempt already wrote is delivered live again (devices drop seqs they have), never
/// appended twice. The write is an `iris.emit` producer span, which every gateway's
/// delivery of the frame continues.
pub async fn publish(
    conn: &mut Connection,
    scope: &ChatScope,
    outgoing: Outgoing,
) -> Result<Published, PublishError> {
    let span = emit_span(scope, &outgoing);
    let trace_parent = crate::telemetry::propagation::traceparent_of(&span);
    write(conn, scope, outgoing, trace_parent)
        .instrument(span)
        .await
}

/// Publishes a live-only frame (`message.update`, `tool.start`, ...) with one `PUBLISH` on
/// the account's channel: no script, no fence check. Only for a writer that knows no newer
/// owner of the chat can exist (its partition lease is surely still its own); a frame
/// that is kept, or that is an effect, is written by [`publish`] instead.
pub async fn publish_live(
    conn: &mut Connection,
    scope: &ChatScope,
    outgoing: Outgoing,
) -> Result<Published, PublishError> {
    let kept = outgoing.frame.body.is_never_dropped()
        || outgoing.effect.is_some()
        || outgoing.history.is_some();
    if kept {
        return publish(conn, scope, outgoing).await;
    }
    let span = emit_span(scope, &outgoing);
    let trace_parent = crate::telemetry::propagation::traceparent_of(&span);
    let (_, routed) = addressed(scope, outgoing, trace_parent);
    let mut publishing = redis::cmd("PUBLISH");
    publishing
        .arg(crate::keys::AccountKeys::new(&scope.account).live())
        .arg(crate::delivery::message(&routed));
    publishing.query_async::<()>(conn).instrument(span).await?;
    Ok(Published { appended: false })
}

/// The `iris.emit` producer span of writing `outgoing`.
fn emit_span(scope: &ChatScope, outgoing: &Outgoing) -> tracing::Span {
    crate::traced_span!(
        "iris.emit",
        otel.kind = "producer",
        messaging.system = "redis",
        messaging.operation.type = "send",
        frame = outgoing.frame.body.type_name(),
        chat = %scope.chat_id
    )
}

/// `outgoing`'s frame as written for `scope` (a thread's frames carry its parent as
/// `chat_id`; `id` and `seq` are set per device at delivery), and routed.
fn addressed(
    scope: &ChatScope,
    outgoing: Outgoing,
    trace_parent: Option<String>,
) -> (ServerFrame, RoutedFrame) {
    let mut frame = outgoing.frame;
    frame.id = None;
    frame.seq = None;
    match &scope.thread_parent {
        Some(parent) => {
            frame.chat_id = Some(parent.clone());
            frame.thread_id = Some(scope.chat_id.clone());
        }
        None => frame.chat_id = Some(scope.chat_id.clone()),
    }
    let routed = RoutedFrame {
        account: scope.account.clone(),
        seq: None,
        frame_json: frame.to_json(),
        origin_device: outgoing.origin_device,
        request_id: outgoing.request_id,
        target_device: outgoing.target_device,
        revoked_token: None,
        trace_parent,
        emitted_us: Some(now_us()),
    };
    (frame, routed)
}

async fn write(
    conn: &mut Connection,
    scope: &ChatScope,
    mut outgoing: Outgoing,
    trace_parent: Option<String>,
) -> Result<Published, PublishError> {
    let (effect, history) = (outgoing.effect.take(), outgoing.history.take());
    let (frame, routed) = addressed(scope, outgoing, trace_parent);
    let outboxed = frame.body.is_never_dropped();
    let indexed = history
        .as_ref()
        .and_then(|message| searchable(scope, message));
    let append = Append {
        frame: routed,
        chat_id: scope.chat_id.clone(),
        fence: scope.fence,
        effect,
        outboxed,
        history,
        indexed,
    };
    let (seq, appended) = match outbox::append(conn, &append, now_ms()).await? {
        AppendOutcome::Written { seq } => (seq, seq.is_some()),
        AppendOutcome::AlreadyWritten { seq } => (seq, false),
        AppendOutcome::Fenced => return Err(PublishError::Fenced),
    };
    // The push job goes to a key of its own (on a Cluster, another slot than the account's).
    if let (Some(seq), Some((kind, title, body))) = (seq, push_for(&frame.body)) {
        // Also after `AlreadyWritten`: the dispatcher pushes each (device, seq) once.
        let job = PushJob {
            account: scope.account.clone(),
            chat_id: scope.chat_id.clone(),
            seq,
            kind,
            title,
            body,
        };
        push::enqueue_command(&job).query_async::<()>(conn).await?;
    }
    Ok(Published { appended })
}
