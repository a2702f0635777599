//! Open pickers (`iris:{a:A}:picker:<id>`, a hash): which chat a picker belongs to and what
//! it is for, so that any device can answer it (gateways route a `picker.select` without
//! `chat_id` by it) and a picker is answered at most once (answering deletes the record).

use redis::aio::ConnectionLike;

use crate::keys::AccountKeys;

/// Field: the chat whose turn or command opened the picker.
pub const CHAT_ID_FIELD: &str = "chat_id";
/// Field: what the picker is for ([`PickerKind::name`]).
pub const KIND_FIELD: &str = "kind";
/// Field of a confirmation picker: the command that a "yes" runs.
pub const ACTION_FIELD: &str = "action";

/// What a picker is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    /// An upstream approval of the running turn.
    Approval,
    /// The model picker of `/model`.
    Model,
    /// The confirmation of a destructive command.
    Confirm,
}

impl PickerKind {
    /// The value of [`KIND_FIELD`].
    pub fn name(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Model => "model",
            Self::Confirm => "confirm",
        }
    }
}

/// The error text for an answer to a picker that is not open (any more).
pub fn not_open_message(picker_id: &str) -> String {
    format!("picker {picker_id:?} is not open (answered already, or expired)")
}

/// Records an open picker of `chat_id` for `ttl_secs`, with extra fields (e.g.
/// [`ACTION_FIELD`] of a confirmation), in one round trip.
pub async fn open<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    chat_id: &str,
    picker_id: &str,
    kind: PickerKind,
    extra: &[(&str, &str)],
    ttl_secs: u64,
) -> redis::RedisResult<()> {
    let key = AccountKeys::new(account).picker(picker_id);
    let mut fields = redis::cmd("HSET");
    fields
        .arg(&key)
        .arg(CHAT_ID_FIELD)
        .arg(chat_id)
        .arg(KIND_FIELD)
        .arg(kind.name());
    for (name, value) in extra {
        fields.arg(*name).arg(*value);
    }
    redis::pipe()
        .add_command(fields)
        .ignore()
        .cmd("EXPIRE")
        .arg(&key)
        .arg(ttl_secs)
        .ignore()
        .query_async(conn)
        .await
}

/// The chat of open picker `picker_id`; `None` if it is not open.
pub async fn chat_of_open<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    picker_id: &str,
) -> redis::RedisResult<Option<String>> {
    redis::cmd("HGET")
        .arg(AccountKeys::new(account).picker(picker_id))
        .arg(CHAT_ID_FIELD)
        .query_async(conn)
        .await
}

/// Closes picker `picker_id`; returns whether it was open (only the answer that closed it
/// may act on it).
pub async fn close<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    picker_id: &str,
) -> redis::RedisResult<bool> {
    let removed: u32 = redis::cmd("DEL")
        .arg(AccountKeys::new(account).picker(picker_id))
        .query_async(conn)
        .await?;
    Ok(removed > 0)
}

/// Closes picker `picker_id` and returns its field `field` (e.g. [`ACTION_FIELD`]), both
/// in one atomic step; `None` if it was not open (or has no such field).
pub async fn take_field<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    picker_id: &str,
    field: &str,
) -> redis::RedisResult<Option<String>> {
    let key = AccountKeys::new(account).picker(picker_id);
    let (value, _): (Option<String>, ()) = redis::pipe()
        .atomic()
        .cmd("HGET")
        .arg(&key)
        .arg(field)
        .cmd("DEL")
        .arg(&key)
        .query_async(conn)
        .await?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_not_open_message_names_the_picker() {
        assert_eq!(
            not_open_message("model-1"),
            r#"picker "model-1" is not open (answered already, or expired)"#
        );
    }

    #[test]
    fn kinds_keep_their_stored_names() {
        let kinds = [PickerKind::Approval, PickerKind::Model, PickerKind::Confirm];
        let names = kinds.map(PickerKind::name);
        assert_eq!(names, ["approval", "model", "confirm"]);
    }
}
