//! A server API request (a cron job's message, a notification) as the frame it becomes: the
//! same for the gateway that received it, which writes it at once, and for a worker that
//! reads one from its inbound stream (sent by a gateway of an earlier release).
//!
//! Each is written once: its effect is keyed by the request's idempotency key when it has
//! one (a retried publish gives one message), by a unique origin otherwise (a worker reading
//! the request again after a takeover writes it once). A gateway writes a request without a
//! key as no effect at all: it writes it once, and a client that retries sends a new one.

use crate::clock::now_ms;
use crate::inbound::ServerRequest;
use crate::outbox::EffectId;
use crate::partition::Partition;
use crate::protocol::{MessagePayload, Notification, ServerBody, ServerFrame};
use crate::publish::Outgoing;

/// Where the effect of a server request's frame is recorded: the chat's partition and an
/// origin unique to the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The chat's partition.
    pub partition: Partition,
    /// `k-<key>` for a publish with an idempotency key, else unique to the request.
    pub id: String,
}

impl Origin {
    /// The origin of `request`: its idempotency key if it has one, else `unique`.
    pub fn of(request: &ServerRequest, partition: Partition, unique: String) -> Self {
        let id = match request {
            ServerRequest::Publish { key: Some(key), .. } => format!("k-{key}"),
            _ => unique,
        };
        Self { partition, id }
    }

    /// Whether the request named an idempotency key.
    pub fn is_keyed(&self) -> bool {
        self.id.starts_with("k-")
    }

    /// The effect id its one frame is written as.
    pub fn effect(&self) -> EffectId {
        EffectId {
            partition: self.partition,
            entry_id: self.id.clone(),
            ordinal: 0,
        }
    }
}

/// An origin no other request has (for a request without an idempotency key): the time and
/// a random number.
pub fn unique_origin() -> String {
    format!("g{}-{:016x}", now_ms(), rand::random::<u64>())
}

/// The frame `request` becomes, for every device of the account (a published message also
/// goes to the chat's history), not yet keyed by its effect.
pub fn outgoing(request: ServerRequest, origin: &Origin, received_ms: u64) -> Outgoing {
    match request {
        ServerRequest::Publish { role, text, .. } => {
            let message = MessagePayload {
                message_id: Some(format!("s{}-{}", origin.partition, origin.id)),
                role: Some(role),
                text: Some(text),
                ts: Some(received_ms),
                ..Default::default()
            };
            let frame = ServerFrame::new(ServerBody::Message(message.clone()));
            Outgoing::broadcast(frame).with_history(message)
        }
        ServerRequest::Notify { kind, title, body } => {
            let notice = Notification {
                kind: Some(kind),
                title: Some(title),
                body: Some(body),
                ts: Some(now_ms()),
                ..Default::default()
            };
            Outgoing::broadcast(ServerFrame::new(ServerBody::Notification(notice)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;

    #[test]
    fn a_keyed_publish_is_one_effect_whoever_writes_it() {
        let publish = |key: Option<&str>| ServerRequest::Publish {
            role: Role::Cron,
            text: "done".into(),
            key: key.map(str::to_owned),
        };
        let by_gateway = Origin::of(&publish(Some("job-7")), 3, "g1".into());
        let by_worker = Origin::of(&publish(Some("job-7")), 3, "1700000000000-0".into());
        assert_eq!(by_gateway, by_worker);
        assert_eq!(by_gateway.effect().entry_id, "k-job-7");
        assert!(by_gateway.is_keyed());
        let unkeyed = Origin::of(&publish(None), 3, "g2".into());
        assert_eq!(unkeyed.id, "g2");
        assert!(!unkeyed.is_keyed());
        let frame = outgoing(publish(None), &unkeyed, 5).frame;
        let ServerBody::Message(message) = frame.body else {
            panic!("a publish is a message");
        };
        assert_eq!(message.message_id.as_deref(), Some("s3-g2"));
        assert_eq!(message.ts, Some(5));
    }
}
