//! What the chat directory and its chat actors tell each other: the chat's identity, work
//! for a chat and its retirement (directory → chat), and how an entry ended (chat →
//! directory).

use actix::prelude::*;

use iris_shared::inbound::InboundEntry;

/// Identity of a chat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChatKey {
    /// Its account.
    pub account: String,
    /// Its chat id.
    pub chat_id: String,
}

/// An inbound entry for this chat, with the fencing token it was read under.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Work {
    /// The entry.
    pub entry: InboundEntry,
    /// Fencing token of the partition lease when the entry was read.
    pub fence: u64,
}

/// The directory retires this idle actor.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Retire;

/// Drain: start no more turns; answered once the running turn (if any) has ended and its
/// entries are acknowledged.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct FinishRunningTurn;

/// A chat actor finished (and acknowledged) one entry.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct EntryDone {
    /// The chat.
    pub key: ChatKey,
}

/// A chat actor was fenced off by a newer owner and stopped.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Fenced {
    /// The chat.
    pub key: ChatKey,
}
