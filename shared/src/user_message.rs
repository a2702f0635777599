//! The user's own message of a `message.send`: the first effect of its turn, so that a
//! message is the user's, not the agent's.
//!
//! The gateway that received the request writes it while it appends the inbound entry (in
//! the same round trip), so the sender's echo and the account's other devices never wait
//! for a worker (nor for a running turn, nor for a worker to exist). It names the message
//! with a key of its own choosing ([`new_message_key`]), which the entry carries; the
//! worker that owns the chat writes the message again if it finds it missing (the gateway
//! died in between): both build the same frame from the request, and the effect id makes
//! it one write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

use futures_util::future::join;

use crate::consumer_group::entry_order;
use crate::inbound::{Enqueued, InboundRequest};
use crate::outbox::EffectId;
use crate::partition::{partition_of, Partition};
use crate::protocol::{
    AgentBusy, BusyReason, MediaRef, MessagePayload, Role, ServerBody, ServerFrame,
};
use crate::publish::{publish, ChatScope, Outgoing, PublishError};
use crate::redis_conn::{Connection, Link};

/// Effect ordinal of the user's message within the handling of its inbound entry.
pub const USER_MESSAGE_ORDINAL: u32 = 0;
/// Effect ordinal of the `agent.busy {unavailable: true}` a gateway writes after the user's
/// message when no worker holds the chat's partition.
pub const UNAVAILABLE_ORDINAL: u32 = 6;

/// The next number of this process's message keys; starts at a random point, so that keys
/// of different gateways made in the same millisecond differ.
static NEXT_KEY_NUMBER: LazyLock<AtomicU64> =
    LazyLock::new(|| AtomicU64::new(rand::random::<u64>() >> 1));

/// A new key for a user's message received at `now_ms`: `<ms>-<n>`, shaped and ordered like
/// a stream entry id, so a turn tells the messages sent after its own apart.
pub fn new_message_key(now_ms: u64) -> String {
    let number = NEXT_KEY_NUMBER.fetch_add(1, Ordering::Relaxed);
    format!("{now_ms}-{number}")
}

/// Whether `key` can name a user's message (it is shaped like a stream entry id).
pub fn is_message_key(key: &str) -> bool {
    entry_order(key).is_some()
}

/// Message id of the user's message of key `key` (its inbound entry id, or the key its
/// gateway gave it) in `partition`.
pub fn user_message_id(partition: Partition, key: &str) -> String {
    format!("u{partition}-{key}")
}

/// The (partition, key) of the user message `message_id` is, if it is one.
pub fn key_of_user_message(message_id: &str) -> Option<(Partition, &str)> {
    let (partition, key) = message_id.strip_prefix('u')?.split_once('-')?;
    Some((partition.parse().ok()?, key))
}

/// Whether stream entry id (or message key) `a` comes after `b` (`<ms>-<seq>` ids compare
/// as numbers).
pub fn entry_is_after(a: &str, b: &str) -> bool {
    matches!((entry_order(a), entry_order(b)), (Some(a), Some(b)) if a > b)
}

/// Message id of the agent's answer to the user's message of key `key`.
pub fn answer_message_id(partition: Partition, key: &str) -> String {
    format!("a{partition}-{key}")
}

/// A `message.send` as both writers see it.
#[derive(Debug, Clone)]
pub struct UserMessage<'a> {
    /// Partition of its inbound entry.
    pub partition: Partition,
    /// Its key: the one its gateway gave it, or its inbound entry id.
    pub key: &'a str,
    /// Device that sent it.
    pub device_id: &'a str,
    /// Its request id (the sender's echo carries it).
    pub request_id: Option<u64>,
    /// The text.
    pub text: &'a str,
    /// The attached media's records.
    pub media: Vec<MediaRef>,
    /// When the gateway received it.
    pub received_ms: u64,
}

impl<'a> UserMessage<'a> {
    /// The user's message `request` names by its key (none when the gateway leaves the
    /// message to the worker): partition, key, sender and time come from the request.
    pub fn carried_by(
        request: &'a InboundRequest,
        partitions: u32,
        request_id: Option<u64>,
        text: &'a str,
        media: Vec<MediaRef>,
    ) -> Option<Self> {
        Some(Self {
            partition: partition_of(&request.account, &request.chat_id, partitions),
            key: request.user_message_key.as_deref()?,
            device_id: &request.device_id,
            request_id,
            text,
            media,
            received_ms: request.received_ms,
        })
    }

    /// The message as it is shown and kept in history.
    pub fn payload(&self) -> MessagePayload {
        MessagePayload {
            message_id: Some(user_message_id(self.partition, self.key)),
            role: Some(Role::User),
            text: Some(self.text.to_owned()),
            media: Some(self.media.clone()).filter(|media| !media.is_empty()),
            ts: Some(self.received_ms),
            ..Default::default()
        }
    }

    /// The frame to write: for every device, answering the sender's request, recorded in
    /// history, once per inbound entry.
    pub fn outgoing(&self) -> Outgoing {
        let payload = self.payload();
        Outgoing::broadcast(ServerFrame::new(ServerBody::Message(payload.clone())))
            .answering(self.device_id, self.request_id)
            .with_history(payload)
            .once_as(EffectId {
                partition: self.partition,
                entry_id: self.key.to_owned(),
                ordinal: USER_MESSAGE_ORDINAL,
            })
    }
}

/// What became of a `message.send` whose user's message its gateway writes.
#[derive(Debug)]
pub struct SentFromGateway {
    /// Where the request went.
    pub enqueued: Enqueued,
    /// How many frames the gateway appended to the outbox (none when the worker was
    /// first), or why it left the user's message to the worker.
    pub written: Result<u64, PublishError>,
}

/// Appends `request` (which carries `message`'s key) to its chat's partition and writes
/// `message` as the gateway that received it does, in one round trip: both commands are
/// sent before either answers. The message is written unfenced (the request alone
/// determines it), and followed by `agent.busy {unavailable: true}` when no worker held the
/// chat's partition, so the devices know the answer waits for one. Fails only when the
/// request could not be appended, twice.
pub async fn send_from_gateway(
    conn: &mut Connection,
    partitions: u32,
    request: &InboundRequest,
    chat: ChatScope,
    message: &UserMessage<'_>,
) -> redis::RedisResult<SentFromGateway> {
    // The append goes on a second handle of the same link, so it is on its way while the
    // message's script is.
    let mut link = Link::clone(conn);
    let (enqueued, written) = join(
        request.enqueue(&mut link, partitions),
        publish(conn, &chat, message.outgoing()),
    )
    .await;
    let enqueued = match enqueued {
        Ok(enqueued) => enqueued,
        // The message may be shown already: the append is sent once more, through `conn`
        // (which finds the new master after a refusal). Should both land, the two entries
        // share the key that names the turn's effects, so the turn runs once.
        Err(err) => {
            tracing::debug!(%err, "inbound append failed; sending it again");
            request.enqueue(conn, partitions).await?
        }
    };
    let mut written = written.map(|published| u64::from(published.appended));
    if let (Ok(appended), false) = (&mut written, enqueued.owned) {
        let busy = AgentBusy {
            unavailable: Some(true),
            ..AgentBusy::because(BusyReason::Processing)
        };
        let unavailable = Outgoing::broadcast(ServerFrame::new(ServerBody::AgentBusy(busy)))
            .once_as(EffectId {
                partition: message.partition,
                entry_id: message.key.to_owned(),
                ordinal: UNAVAILABLE_ORDINAL,
            });
        match publish(conn, &chat, unavailable).await {
            Ok(published) => *appended += u64::from(published.appended),
            Err(err) => written = Err(err),
        }
    }
    Ok(SentFromGateway { enqueued, written })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_message_id_names_its_key() {
        let id = user_message_id(7, "1700000000000-3");
        assert_eq!(key_of_user_message(&id), Some((7, "1700000000000-3")));
        assert_eq!(key_of_user_message("a7-1-0"), None);
    }

    #[test]
    fn message_keys_are_distinct_and_ordered_like_entry_ids() {
        let (first, second) = (
            new_message_key(1_700_000_000_000),
            new_message_key(1_700_000_000_000),
        );
        assert_ne!(first, second);
        assert!(is_message_key(&first));
        assert!(entry_is_after(&second, &first));
        assert!(entry_is_after(&new_message_key(1_700_000_000_001), &second));
        assert!(!is_message_key("1"));
    }

    #[test]
    fn entry_ids_compare_as_numbers_not_text() {
        assert!(entry_is_after("1700000000000-10", "1700000000000-9"));
        assert!(entry_is_after("1700000000001-0", "1700000000000-9"));
        assert!(!entry_is_after("1700000000000-9", "1700000000000-9"));
    }
}
