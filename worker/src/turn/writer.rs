//! Writes the frames of one turn. Never-dropped frames are effects of the turn's inbound
//! entry and get ordinals, so a turn replayed after a takeover writes each at most once:
//! the fixed frames of every turn (user message, first busy, error, stop, idle) have fixed
//! ordinals; frames whose number varies (tool ends, pickers, busy changes) are numbered in
//! the order the turn writes them, from [`FIRST_DYNAMIC_ORDINAL`].

use iris_shared::outbox::EffectId;
use iris_shared::partition::Partition;
use iris_shared::protocol::{ServerBody, ServerFrame};

use crate::turn::publisher::{ChatScope, Outgoing, PublishError, Publisher};

/// Fixed ordinals of every turn.
pub mod ordinal {
    /// The user's message (written by the gateway that received it, or by the turn).
    pub const USER_MESSAGE: u32 = iris_shared::user_message::USER_MESSAGE_ORDINAL;
    /// The first `agent.busy`.
    pub const BUSY: u32 = 1;
    /// The `error` of a failed turn.
    pub const ERROR: u32 = 2;
    /// `message.stop`.
    pub const STOP: u32 = 3;
    /// `agent.idle`: the last effect; once written the turn is complete.
    pub const IDLE: u32 = 4;
    /// The `agent.busy` telling devices the message is queued behind a running turn
    /// (ordinal 6 is the gateway's `agent.busy {unavailable}`: `user_message`).
    pub const QUEUED: u32 = 5;
}

/// First ordinal of the frames numbered in writing order.
pub const FIRST_DYNAMIC_ORDINAL: u32 = 100;

/// Writes one turn's frames.
pub struct TurnWriter {
    publisher: Publisher,
    scope: ChatScope,
    partition: Partition,
    /// Key of the handling whose effects these are (a turn's message key, or an entry id).
    key: String,
    next_dynamic: u32,
}

impl TurnWriter {
    /// A writer for the effects of key `key` (a turn's message key, or the id of the
    /// inbound entry handled) of `partition`.
    pub fn new(publisher: Publisher, scope: ChatScope, partition: Partition, key: String) -> Self {
        Self {
            publisher,
            scope,
            partition,
            key,
            next_dynamic: FIRST_DYNAMIC_ORDINAL,
        }
    }

    /// The chat the turn belongs to.
    pub fn scope(&self) -> &ChatScope {
        &self.scope
    }

    /// Effect `ordinal` of this turn.
    pub fn effect(&self, ordinal: u32) -> EffectId {
        EffectId {
            partition: self.partition,
            entry_id: self.key.clone(),
            ordinal,
        }
    }

    /// Writes `outgoing` as the fixed effect `ordinal`.
    pub async fn fixed(&self, ordinal: u32, outgoing: Outgoing) -> Result<(), PublishError> {
        let outgoing = outgoing.once_as(self.effect(ordinal));
        self.publisher.emit(&self.scope, outgoing).await
    }

    /// Writes a never-dropped frame numbered in writing order.
    pub async fn numbered(&mut self, outgoing: Outgoing) -> Result<(), PublishError> {
        let ordinal = self.next_dynamic;
        self.next_dynamic += 1;
        self.fixed(ordinal, outgoing).await
    }

    /// Writes a never-dropped frame for every device, numbered in writing order.
    pub async fn broadcast(&mut self, body: ServerBody) -> Result<(), PublishError> {
        self.numbered(Outgoing::broadcast(ServerFrame::new(body)))
            .await
    }

    /// Writes a live-only frame (`message.update`, `tool.start`, ...): no ordinal, not
    /// replayed by `sync`.
    pub async fn live(&self, body: ServerBody) -> Result<(), PublishError> {
        let outgoing = Outgoing::broadcast(ServerFrame::new(body));
        self.publisher
            .emit_live(&self.scope, self.partition, outgoing)
            .await
    }
}
