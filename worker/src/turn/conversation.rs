//! A chat's history as the conversation an upstream agent is given with a turn.

use iris_shared::history::HistoryEntry;
use iris_shared::partition::Partition;
use iris_shared::protocol::Role;
use iris_shared::user_message;

use crate::agent::ChatMessage;

/// Most earlier messages sent to the upstream with a turn.
pub const CONVERSATION_LIMIT: usize = 50;

/// The conversation an upstream is given: user and assistant messages with text, except
/// those of the turn being run (a turn replayed after a takeover already has its own user
/// message in history).
pub fn as_conversation(
    entries: &[HistoryEntry],
    partition: Partition,
    message_key: &str,
) -> Vec<ChatMessage> {
    let own = [
        user_message::user_message_id(partition, message_key),
        user_message::answer_message_id(partition, message_key),
    ];
    // A user message sent after this turn's is shown already but waits for its own turn
    // (queued behind this one): not part of this turn's conversation.
    let later = |id: &str| {
        user_message::key_of_user_message(id).is_some_and(|(p, key)| {
            p == partition && user_message::entry_is_after(key, message_key)
        })
    };
    entries
        .iter()
        .filter(|entry| {
            let id = entry.message.message_id.as_deref().unwrap_or_default();
            !own.iter().any(|own| own == id) && !later(id)
        })
        .filter_map(|entry| {
            let role = match entry.message.role {
                Some(Role::User) => "user",
                Some(Role::Assistant) => "assistant",
                _ => return None,
            };
            let content = entry.message.text.clone().filter(|t| !t.is_empty())?;
            Some(ChatMessage {
                role: role.to_owned(),
                content,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iris_shared::protocol::MessagePayload;

    fn entry(id: &str, role: Role, text: &str) -> HistoryEntry {
        HistoryEntry {
            entry_id: format!("{id}-0"),
            message: MessagePayload {
                message_id: Some(id.to_owned()),
                role: Some(role),
                text: Some(text.to_owned()),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_conversation_keeps_user_and_assistant_text_in_order() {
        let entries = [
            entry("u1-1-0", Role::User, "hi"),
            entry("a1-1-0", Role::Assistant, "hello"),
            entry("s1-1-0", Role::System, "note"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        let roles: Vec<_> = conversation.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant"]);
    }

    #[test]
    fn the_running_turn_s_own_messages_are_left_out() {
        let entries = [
            entry("u1-1-0", Role::User, "hi"),
            entry("u1-2-0", Role::User, "again"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        assert_eq!(conversation.len(), 1);
        assert_eq!(conversation[0].content, "hi");
    }

    #[test]
    fn messages_queued_behind_the_turn_are_left_out_but_an_interrupted_answer_stays() {
        // u1-3-0 was sent (and shown) while turn 2-0 ran; the partial answer to the turn
        // before it was written after both.
        let entries = [
            entry("u1-1-0", Role::User, "first"),
            entry("u1-2-0", Role::User, "second"),
            entry("u1-3-0", Role::User, "third"),
            entry("a1-1-0", Role::Assistant, "partial first answer"),
        ];
        let conversation = as_conversation(&entries, 1, "2-0");
        let texts: Vec<_> = conversation.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["first", "partial first answer"]);
    }
}
