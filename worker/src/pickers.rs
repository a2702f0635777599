//! Open pickers in Redis (`iris:{a:A}:picker:<id>`): which chat a picker belongs to and
//! what it is for, so that any device can answer it (gateways route a `picker.select`
//! without `chat_id` by it) and a picker is answered at most once.

use redis::aio::ConnectionLike;

use iris_shared::keys::AccountKeys;

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
    fn name(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Model => "model",
            Self::Confirm => "confirm",
        }
    }
}

/// Records an open picker of `chat_id` for `ttl_secs`, with extra fields (e.g. the action a
/// confirmation runs).
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
        .arg("chat_id")
        .arg(chat_id)
        .arg("kind")
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
