//! Writes a chat's frames: atomically to the account's outbox (with seq, fenced and
//! de-duplicated) and then to the delivery streams of the gateway nodes holding the
//! account's devices.

use iris_shared::redis_conn::Pool;
use redis::{ErrorKind, ServerErrorKind};

use tracing::Instrument as _;

use iris_shared::clock::{now_ms, now_us};
use iris_shared::delivery::{add_publish_to_nodes, RoutedFrame};
use iris_shared::outbox::{self, Append, AppendOutcome, EffectId};
use iris_shared::protocol::{MessagePayload, ServerFrame};
use iris_shared::push::{self, PushJob};
use iris_shared::search::{self, IndexedMessage};

use crate::metrics;
use crate::push_jobs::push_for;

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

impl From<iris_shared::redis_conn::PoolError> for PublishError {
    fn from(err: iris_shared::redis_conn::PoolError) -> Self {
        Self::Redis(err.to_string())
    }
}

/// The chat a publisher writes for, and the owner's fencing token.
#[derive(Debug, Clone)]
pub struct ChatScope {
    /// Account of the chat.
    pub account: String,
    /// The chat.
    pub chat_id: String,
    /// Fencing token of the partition lease this worker holds.
    pub fence: u64,
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
    /// A finished message to add to the chat history (JSON).
    pub history_entry: Option<String>,
    /// That message's id.
    pub history_message_id: Option<String>,
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
            history_entry: None,
            history_message_id: None,
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
    pub fn with_history(mut self, entry: serde_json::Value) -> Self {
        self.history_message_id = entry["message_id"].as_str().map(str::to_owned);
        self.history_entry = Some(entry.to_string());
        self
    }
}

/// A history entry as the search index takes it (messages without text are not indexed).
fn searchable(scope: &ChatScope, history_entry: &str) -> Option<IndexedMessage> {
    let message: MessagePayload = serde_json::from_str(history_entry).ok()?;
    Some(IndexedMessage {
        chat_id: scope.chat_id.clone(),
        thread_id: None,
        message_id: message.message_id?,
        role: message.role?,
        text: message.text.filter(|text| !text.is_empty())?,
        ts: message.ts.unwrap_or_else(iris_shared::clock::now_ms),
    })
}

/// Writes frames for chats.
#[derive(Clone)]
pub struct Publisher {
    redis: Pool,
}

impl Publisher {
    /// A publisher over `redis`.
    pub fn new(redis: Pool) -> Self {
        Self { redis }
    }

    /// Writes one frame: outbox (never-dropped frames) then live delivery. A frame an
    /// earlier attempt already wrote is delivered live again (devices drop seqs they
    /// have), never appended twice.
    pub async fn emit(&self, scope: &ChatScope, outgoing: Outgoing) -> Result<(), PublishError> {
        let frame_type = outgoing.frame.body.type_name();
        let span = iris_shared::traced_span!(
            "iris.emit",
            otel.kind = "producer",
            messaging.system = "redis",
            messaging.operation.type = "send",
            frame = frame_type,
            chat = %scope.chat_id
        );
        let result = self
            .write(scope, outgoing, &span)
            .instrument(span.clone())
            .await;
        let stats = metrics::get();
        match &result {
            Ok(()) => stats.frames_published_total.incr(frame_type),
            Err(PublishError::Fenced) => metrics::incr(&stats.fenced_total),
            Err(PublishError::Redis(_)) => metrics::incr(&stats.redis_errors_total),
        }
        result
    }

    async fn write(
        &self,
        scope: &ChatScope,
        outgoing: Outgoing,
        span: &tracing::Span,
    ) -> Result<(), PublishError> {
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
        let outboxed = frame.body.is_never_dropped();
        let routed = RoutedFrame {
            account: scope.account.clone(),
            seq: None,
            frame_json: frame.to_json(),
            origin_device: outgoing.origin_device,
            request_id: outgoing.request_id,
            target_device: outgoing.target_device,
            revoked_token: None,
            trace_parent: iris_shared::telemetry::propagation::traceparent_of(span),
            emitted_us: None,
        };
        let append = Append {
            frame: routed,
            chat_id: scope.chat_id.clone(),
            fence: scope.fence,
            effect: outgoing.effect,
            outboxed,
            history_entry: outgoing.history_entry,
            history_message_id: outgoing.history_message_id,
        };
        let mut conn = self.redis.get().await?;
        let (seq, nodes) = match outbox::append(&mut conn, &append, now_ms()).await? {
            AppendOutcome::Written { seq, nodes } => {
                if seq.is_some() {
                    metrics::incr(&metrics::get().outbox_appends_total);
                }
                (seq, nodes)
            }
            AppendOutcome::AlreadyWritten { seq, nodes } => (seq, nodes),
            AppendOutcome::Fenced => return Err(PublishError::Fenced),
        };
        // Everything after the append goes out in one round trip, the delivery first: the
        // devices' frame, then the push job and the search entry, which nobody waits for.
        let routed = RoutedFrame {
            seq,
            emitted_us: Some(now_us()),
            ..append.frame
        };
        let mut after = redis::pipe();
        add_publish_to_nodes(&mut after, &routed, &nodes);
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
            after.add_command(push::enqueue_command(&job)).ignore();
        }
        let indexed = append
            .history_entry
            .as_deref()
            .and_then(|h| searchable(scope, h));
        if let Some(message) = &indexed {
            // Also after `AlreadyWritten`: the attempt that wrote the message may have died
            // before indexing it; indexing is idempotent.
            search::add_index_message(&mut after, &scope.account, message);
        }
        if after.is_empty() {
            return Ok(());
        }
        match (after.query_async::<()>(&mut conn).await, &indexed) {
            // Redis had not seen the index script (first use, or restarted): every other
            // command ran; index again with the call that loads it.
            (Err(err), Some(message))
                if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) =>
            {
                search::index_message(&mut conn, &scope.account, message).await?;
            }
            (result, _) => result?,
        }
        Ok(())
    }
}
