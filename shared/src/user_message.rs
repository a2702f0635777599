//! The user's own message of a `message.send`: the first effect of its inbound entry, so
//! that a message is the user's, not the agent's.
//!
//! The gateway that received the request writes it right after appending the entry, so the
//! sender's echo and the account's other devices never wait for a worker (nor for a running
//! turn, nor for a worker to exist). The worker that owns the chat writes it again if it
//! finds it missing (the gateway died in between); both build the same frame from the
//! request, and the effect id makes it one write.

use crate::consumer_group::entry_order;
use crate::outbox::EffectId;
use crate::partition::Partition;
use crate::protocol::{
    AgentBusy, BusyReason, MediaRef, MessagePayload, Role, ServerBody, ServerFrame,
};
use crate::publish::{publish, ChatScope, Outgoing, PublishError};
use crate::redis_conn::Connection;

/// Effect ordinal of the user's message within the handling of its inbound entry.
pub const USER_MESSAGE_ORDINAL: u32 = 0;
/// Effect ordinal of the `agent.busy {unavailable: true}` a gateway writes after the user's
/// message when no worker holds the chat's partition.
pub const UNAVAILABLE_ORDINAL: u32 = 6;

/// Message id of the user's message of inbound entry `entry_id` of `partition`.
pub fn user_message_id(partition: Partition, entry_id: &str) -> String {
    format!("u{partition}-{entry_id}")
}

/// The inbound entry (partition, entry id) whose user message `message_id` is, if it is one.
pub fn entry_of_user_message(message_id: &str) -> Option<(Partition, &str)> {
    let (partition, entry_id) = message_id.strip_prefix('u')?.split_once('-')?;
    Some((partition.parse().ok()?, entry_id))
}

/// Whether stream entry id `a` comes after `b` (`<ms>-<seq>` ids compare as numbers).
pub fn entry_is_after(a: &str, b: &str) -> bool {
    matches!((entry_order(a), entry_order(b)), (Some(a), Some(b)) if a > b)
}

/// Message id of the agent's answer to that message.
pub fn answer_message_id(partition: Partition, entry_id: &str) -> String {
    format!("a{partition}-{entry_id}")
}

/// A `message.send` as both writers see it.
#[derive(Debug, Clone)]
pub struct UserMessage<'a> {
    /// Partition of its inbound entry.
    pub partition: Partition,
    /// Its inbound entry id.
    pub entry_id: &'a str,
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

impl UserMessage<'_> {
    /// The message as it is shown and kept in history.
    pub fn payload(&self) -> MessagePayload {
        MessagePayload {
            message_id: Some(user_message_id(self.partition, self.entry_id)),
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
                entry_id: self.entry_id.to_owned(),
                ordinal: USER_MESSAGE_ORDINAL,
            })
    }
}

/// Writes the user's message as the gateway that received it does: unfenced (the request
/// alone determines it), and followed by `agent.busy {unavailable: true}` when no worker
/// held the chat's partition, so the devices know the answer waits for one. Returns how
/// many frames it appended to the outbox (none when the worker was first).
pub async fn write_from_gateway(
    conn: &mut Connection,
    chat: ChatScope,
    message: &UserMessage<'_>,
    worker_holds_chat: bool,
) -> Result<u64, PublishError> {
    let written = publish(conn, &chat, message.outgoing()).await?;
    let mut appended = u64::from(written.appended);
    if worker_holds_chat {
        return Ok(appended);
    }
    let busy = AgentBusy {
        unavailable: Some(true),
        ..AgentBusy::because(BusyReason::Processing)
    };
    let unavailable =
        Outgoing::broadcast(ServerFrame::new(ServerBody::AgentBusy(busy))).once_as(EffectId {
            partition: message.partition,
            entry_id: message.entry_id.to_owned(),
            ordinal: UNAVAILABLE_ORDINAL,
        });
    appended += u64::from(publish(conn, &chat, unavailable).await?.appended);
    Ok(appended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_message_id_names_its_inbound_entry() {
        let id = user_message_id(7, "1700000000000-3");
        assert_eq!(entry_of_user_message(&id), Some((7, "1700000000000-3")));
        assert_eq!(entry_of_user_message("a7-1-0"), None);
    }

    #[test]
    fn entry_ids_compare_as_numbers_not_text() {
        assert!(entry_is_after("1700000000000-10", "1700000000000-9"));
        assert!(entry_is_after("1700000000001-0", "1700000000000-9"));
        assert!(!entry_is_after("1700000000000-9", "1700000000000-9"));
    }
}
