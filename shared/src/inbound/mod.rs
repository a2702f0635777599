//! Entries of the per-partition inbound streams: chat-scoped requests on their way from a
//! gateway to the worker that owns the chat's partition.

use std::sync::Arc;

use redis::aio::ConnectionLike;
use redis::streams::StreamId;
use tracing::Instrument;

use crate::keys;
use crate::partition::{partition_of, Partition};
use crate::protocol::{parse_app_frame, AppFrame, ProtocolError};

mod group;

pub use group::{
    acknowledge, claim_from, consumers_with_pending, create_group, read_new, PendingEntries,
};

/// Field names of an inbound stream entry.
mod field {
    pub const ACCOUNT: &str = "a";
    pub const DEVICE: &str = "d";
    pub const CHAT: &str = "c";
    pub const FRAME: &str = "f";
    pub const GATEWAY: &str = "g";
    pub const RECEIVED_MS: &str = "ts";
    pub const TRACE_PARENT: &str = "tp";
    /// The key of the user's message, present when the gateway writes that message itself.
    pub const USER_MESSAGE_KEY: &str = "um";
}

/// Most entries an inbound stream keeps; far above what healthy workers leave unread.
pub const INBOUND_MAX_LEN: u64 = 1_000_000;

/// `device_id` of requests that come from the server API rather than a device; their
/// `frame_json` is a [`ServerRequest`]. Device ids starting with `@` are refused at pairing.
pub const SERVER_DEVICE_ID: &str = "@server";

/// Something the server API asks the owner of a chat to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerRequest {
    /// Publish a finished message into the chat (e.g. a cron job's result).
    Publish {
        /// `assistant`, `system` or `cron`.
        role: crate::protocol::Role,
        /// The message text.
        text: String,
        /// Idempotency key: publishing the same key again does nothing.
        key: Option<String>,
    },
    /// Send a notification to the account's devices.
    Notify {
        /// Its kind (cron, generic, ...).
        kind: crate::protocol::NotificationKind,
        /// Headline.
        title: String,
        /// Body text.
        body: String,
    },
}

impl ServerRequest {
    /// Its name, for spans and logs.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Publish { .. } => "publish",
            Self::Notify { .. } => "notify",
        }
    }
}

/// One request for a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundRequest {
    /// Account the request belongs to.
    pub account: String,
    /// Device that sent it.
    pub device_id: String,
    /// Chat it is scoped to.
    pub chat_id: String,
    /// The app frame as JSON (protocol v1, as parsed and re-serialized by the gateway).
    pub frame_json: String,
    /// Gateway node that received it.
    pub gateway: String,
    /// When the gateway received it (ms since the epoch).
    pub received_ms: u64,
    /// W3C `traceparent` the entry carries, when traced: the gateway's `iris.enqueue` span,
    /// which [`Self::enqueue`] makes and writes itself (a request to enqueue leaves it `None`).
    pub trace_parent: Option<String>,
    /// The key of the user's message of this `message.send` when the gateway writes that
    /// message itself, with the append (`user_message`): the turn's messages and effects
    /// are named by it, and the worker looks for the message only when the turn starts.
    pub user_message_key: Option<String>,
}

/// Where [`InboundRequest::enqueue`] put a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    /// The chat's partition.
    pub partition: Partition,
    /// The entry id.
    pub entry_id: String,
    /// Whether a worker held the partition's lease at the time (looked up only for a
    /// request whose user's message the gateway writes; `true` otherwise).
    pub owned: bool,
}

impl InboundRequest {
    /// Appends the request to its chat's partition and, in the same round trip for a
    /// request whose user's message the gateway writes, learns whether a worker holds the
    /// partition. When traced, the append is a producer span of
    /// its own (a child of the request's), and the entry carries that span, so the
    /// worker's spans show the hop through Redis.
    pub async fn enqueue<C: ConnectionLike + Send>(
        &self,
        conn: &mut C,
        partitions: u32,
    ) -> redis::RedisResult<Enqueued> {
        let partition = partition_of(&self.account, &self.chat_id, partitions);
        let stream = keys::inbound(partition);
        let span = crate::traced_span!(
            "iris.enqueue",
            otel.kind = "producer",
            messaging.system = "redis",
            messaging.operation.type = "send",
            messaging.destination.name = %stream,
        );
        let trace_parent = crate::telemetry::propagation::traceparent_of(&span);
        let mut xadd = redis::cmd("XADD");
        xadd.arg(&stream)
            .arg("MAXLEN")
            .arg("~")
            .arg(INBOUND_MAX_LEN)
            .arg("*")
            .arg(field::ACCOUNT)
            .arg(&self.account)
            .arg(field::DEVICE)
            .arg(&self.device_id)
            .arg(field::CHAT)
            .arg(&self.chat_id)
            .arg(field::FRAME)
            .arg(&self.frame_json)
            .arg(field::GATEWAY)
            .arg(&self.gateway)
            .arg(field::RECEIVED_MS)
            .arg(self.received_ms);
        if let Some(trace_parent) = &trace_parent {
            xadd.arg(field::TRACE_PARENT).arg(trace_parent);
        }
        if let Some(key) = &self.user_message_key {
            xadd.arg(field::USER_MESSAGE_KEY).arg(key);
        }
        // Whether a worker holds the chat matters only to a gateway writing the user's message.
        let (entry_id, owned): (String, bool) = if self.user_message_key.is_some() {
            let mut pipe = redis::pipe();
            pipe.add_command(xadd)
                .cmd("EXISTS")
                .arg(keys::lease(partition));
            pipe.query_async(conn).instrument(span).await?
        } else {
            (xadd.query_async(conn).instrument(span).await?, true)
        };
        Ok(Enqueued {
            partition,
            entry_id,
            owned,
        })
    }

    /// Reads a request back from an inbound stream entry.
    pub fn from_entry(entry: &StreamId) -> Option<Self> {
        let text = |name: &str| entry.get::<String>(name);
        Some(Self {
            account: text(field::ACCOUNT)?,
            device_id: text(field::DEVICE)?,
            chat_id: text(field::CHAT)?,
            frame_json: text(field::FRAME)?,
            gateway: text(field::GATEWAY).unwrap_or_default(),
            received_ms: text(field::RECEIVED_MS)
                .and_then(|ts| ts.parse().ok())
                .unwrap_or(0),
            trace_parent: text(field::TRACE_PARENT),
            // Entries of older gateways carry a mark, not a key: theirs is the entry id.
            user_message_key: text(field::USER_MESSAGE_KEY)
                .filter(|key| crate::user_message::is_message_key(key)),
        })
    }
}

/// An inbound entry as a worker reads it.
#[derive(Debug, Clone)]
pub struct InboundEntry {
    /// Partition it was read from.
    pub partition: Partition,
    /// Its stream entry id (unique within the partition).
    pub entry_id: String,
    /// The request, or `None` if the entry could not be read (it is acknowledged and
    /// dropped with a log line, never retried forever).
    pub request: Option<InboundRequest>,
    /// What the request asks, decoded once as the entry was read.
    pub body: Arc<InboundBody>,
}

/// What an inbound request asks.
#[derive(Debug, Clone, PartialEq)]
pub enum InboundBody {
    /// A device's frame.
    App(AppFrame),
    /// A device's frame that is not a valid frame (it is answered with this error).
    Invalid(ProtocolError),
    /// A request of the server API.
    Server(ServerRequest),
    /// An entry that could not be read at all (request missing, server request garbled).
    Unreadable,
}

impl InboundBody {
    /// Decodes what `request` asks.
    pub fn of(request: Option<&InboundRequest>) -> Self {
        let Some(request) = request else {
            return Self::Unreadable;
        };
        if request.device_id == SERVER_DEVICE_ID {
            return serde_json::from_str(&request.frame_json)
                .map_or(Self::Unreadable, Self::Server);
        }
        parse_app_frame(&request.frame_json).map_or_else(Self::Invalid, Self::App)
    }

    /// Its name, for spans: the frame type, `server`, `invalid` or `unreadable`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::App(frame) => frame.body.type_name(),
            Self::Invalid(_) => "invalid",
            Self::Server(_) => "server",
            Self::Unreadable => "unreadable",
        }
    }
}

impl InboundEntry {
    /// Decodes entry `entry` of `partition`'s stream, once, as it is read.
    pub fn decode(partition: Partition, entry: &StreamId) -> Self {
        let request = InboundRequest::from_entry(entry);
        let body = Arc::new(InboundBody::of(request.as_ref()));
        Self {
            partition,
            entry_id: entry.id.clone(),
            request,
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_with(fields: &[(&str, &str)]) -> StreamId {
        let map = fields
            .iter()
            .map(|(name, value)| {
                let value = redis::Value::BulkString(value.as_bytes().to_vec());
                ((*name).to_owned(), value)
            })
            .collect();
        StreamId {
            id: "1700000000000-0".to_owned(),
            map,
            ..Default::default()
        }
    }

    const REQUEST: [(&str, &str); 4] = [
        (field::ACCOUNT, "acct"),
        (field::DEVICE, "phone"),
        (field::CHAT, "main"),
        (field::FRAME, "{}"),
    ];

    #[test]
    fn an_entry_carries_the_key_its_gateway_gave_the_user_s_message() {
        let key = crate::user_message::new_message_key(1_700_000_000_000);
        let mut fields = REQUEST.to_vec();
        fields.push((field::USER_MESSAGE_KEY, &key));
        let request = InboundRequest::from_entry(&entry_with(&fields)).expect("readable");
        assert_eq!(request.user_message_key.as_deref(), Some(key.as_str()));
    }

    #[test]
    fn an_entry_with_only_the_older_mark_is_named_by_its_entry_id() {
        let mut fields = REQUEST.to_vec();
        fields.push((field::USER_MESSAGE_KEY, "1"));
        let request = InboundRequest::from_entry(&entry_with(&fields)).expect("readable");
        assert_eq!(request.user_message_key, None);
        let request = InboundRequest::from_entry(&entry_with(&REQUEST)).expect("readable");
        assert_eq!(request.user_message_key, None);
    }
}
