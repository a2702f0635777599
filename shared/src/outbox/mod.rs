//! The per-account outbox: the replay log behind `sync`.
//!
//! Every never-dropped frame of an account gets the next integer `seq` and is appended to
//! `iris:{a:A}:outbox` with entry id `<seq>-0`, so a cursor maps straight onto a stream
//! range. A new outbox starts its seq at `unix_seconds << 20` ([`seq_base`]) rather than 0:
//! if Redis ever loses an outbox and a new one is created, its seqs start far above every
//! cursor the old one handed out, and those cursors are recognised as unservable instead of
//! being mistaken for positions in the new log.
//!
//! One seq names one frame, forever: when an outbox is appended to by another Redis
//! history than the one that wrote it last (a promoted replica that may lack the tail, a
//! restart, a moved slot), the append script first *rebases* it, jumping the head above
//! every seq the old history could have handed out and recording the jumped range as
//! possibly lost ([`lost`]). `window` (the sync plan) and [`read_after`] (replays, gap
//! fills) return those ranges, so a device whose last seq lies in one is reset and every
//! other device steps over the jump.

use redis::aio::ConnectionLike;

use crate::delivery::RoutedFrame;
use crate::keys::AccountKeys;
use crate::partition::Partition;
use crate::protocol::MessagePayload;
use crate::scripts;
use crate::search::{self, IndexedMessage};

pub mod lost;
mod window;

pub use lost::LostRanges;
pub use window::{window, OutboxWindow, SyncPlan};

/// Entries an outbox keeps (at least; trimming is approximate).
pub const OUTBOX_MAX_LEN: u64 = 10_000;
/// An outbox, its head and its history disappear after at least this long without a write
/// (at most [`EXPIRY_RENEWAL_SECS`] longer).
pub const OUTBOX_RETENTION_SECS: u64 = 30 * 24 * 3600;
/// How often an append renews the expiries of the outbox, its meta and a chat's history
/// (not on every append: each renewal sets the retention plus this).
pub const EXPIRY_RENEWAL_SECS: u64 = 24 * 3600;
/// How long a turn's written effects are remembered for de-duplicating a replayed turn.
pub const TURN_EFFECTS_TTL_SECS: u64 = 7 * 24 * 3600;
/// Entries read per round trip when replaying.
pub const REPLAY_PAGE: usize = 1_000;

/// How far at least a rebase moves the head past the seq the outbox had: more than the
/// frames of one account a lossy failover can drop (those written within the replication
/// lag), so the next seq is above all of them even when the failover comes within the
/// second the outbox was created or last rebased (where [`seq_base`] alone would not move).
pub const REBASE_JUMP: u64 = 1 << 20;
/// Lost ranges an outbox meta keeps; an older one is folded into the lost floor (its
/// devices, and every older cursor, reset).
pub const LOST_RANGES_KEPT: usize = 8;

/// First seq of an outbox created at `now_ms`.
pub fn seq_base(now_ms: u64) -> u64 {
    (now_ms / 1000) << 20
}

/// Meta field: the outbox head, the last seq handed out.
pub const SEQ_FIELD: &str = "seq";
/// Meta field: the Redis history that last handed out a seq (`repl:<replication id>`; see
/// `scripts/outbox_append.lua`).
pub const RUN_FIELD: &str = "run";

/// One page of a replay, with what the outbox knew when it was read.
#[derive(Debug, Clone, Default)]
pub struct ReplayPage {
    /// Frames after the asked seq, oldest first.
    pub frames: Vec<RoutedFrame>,
    /// The outbox head.
    pub head: u64,
    /// The outbox's lost ranges: a replay steps over their jumps, and a device whose last
    /// seq is inside one is reset.
    pub lost: LostRanges,
}

/// Up to `count` frames of `account` with seq > `after`, oldest first, with the head and
/// lost ranges, in one round trip. The frames are decoded straight from the reply (entry
/// id and field pairs, moved out of it).
pub async fn read_after<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    after: u64,
    count: usize,
) -> redis::RedisResult<ReplayPage> {
    let keys = AccountKeys::new(account);
    type Entries = Vec<(String, Vec<(String, String)>)>;
    type Meta = (Option<u64>, Option<String>, Option<String>);
    let (entries, (head, lost, floor)): (Entries, Meta) = redis::pipe()
        .cmd("XRANGE")
        .arg(keys.outbox())
        .arg(format!("{}-0", after + 1))
        .arg("+")
        .arg("COUNT")
        .arg(count)
        .cmd("HMGET")
        .arg(keys.outbox_meta())
        .arg(SEQ_FIELD)
        .arg(lost::LOST_FIELD)
        .arg(lost::LOST_FLOOR_FIELD)
        .query_async(conn)
        .await?;
    let frames = entries
        .into_iter()
        .filter_map(|(id, fields)| {
            let seq = id.split('-').next()?.parse().ok()?;
            RoutedFrame::from_outbox_entry(fields, account, seq)
        })
        .collect();
    Ok(ReplayPage {
        frames,
        head: head.unwrap_or(0),
        lost: LostRanges::parse(lost.as_deref(), floor.as_deref()),
    })
}

/// Identity of one effect of one inbound entry, so that a turn replayed after a takeover
/// writes each effect once.
#[derive(Debug, Clone)]
pub struct EffectId {
    /// Partition the inbound entry came from.
    pub partition: Partition,
    /// Inbound stream entry id, or for a turn its message key (`user_message`).
    pub entry_id: String,
    /// Position of the effect within the handling of that entry.
    pub ordinal: u32,
}

/// One frame to append for an account.
#[derive(Debug, Clone)]
pub struct Append {
    /// The frame and its addressing (its `seq` is ignored: the script assigns it).
    pub frame: RoutedFrame,
    /// Chat the frame belongs to (for the fence and history).
    pub chat_id: String,
    /// Writer's fencing token for the chat's partition; `None` writes without the fence
    /// check (a frame its request alone determines, de-duplicated by its effect).
    pub fence: Option<u64>,
    /// Set for effects of an inbound entry; `None` writes unconditionally.
    pub effect: Option<EffectId>,
    /// Whether the frame goes to the outbox (never-dropped) or is live only.
    pub outboxed: bool,
    /// A finished message to add to the chat history (indexed by its id, for paging and
    /// receipts).
    pub history: Option<MessagePayload>,
    /// The history entry as the search index takes it, indexed in the same step (a
    /// message without text is not).
    pub indexed: Option<IndexedMessage>,
}

/// Result of [`append`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    /// Written now (`seq` is `None` for live-only frames).
    Written {
        /// Assigned outbox seq.
        seq: Option<u64>,
    },
    /// An earlier attempt at the same effect already wrote it.
    AlreadyWritten {
        /// That attempt's seq.
        seq: Option<u64>,
    },
    /// A newer owner of the chat has written; this writer must stop.
    Fenced,
}

/// Appends one frame atomically: fence check, de-duplication, seq, outbox, history and its
/// search entry, and its live publication (live-only frames too: for them the script checks only the fence).
pub async fn append<C: ConnectionLike + Send>(
    conn: &mut C,
    request: &Append,
    now_ms: u64,
) -> redis::RedisResult<AppendOutcome> {
    let keys = AccountKeys::new(&request.frame.account);
    let (effects_key, effect_field) = match &request.effect {
        Some(effect) => (
            keys.turn_effects(effect.partition, &effect.entry_id),
            effect.ordinal.to_string(),
        ),
        None => (keys.turn_effects(0, "none"), String::new()),
    };
    let frame = &request.frame;
    let history_json = request
        .history
        .as_ref()
        .map(|message| serde_json::to_string(message).expect("a message always serializes"));
    let history_message_id = request
        .history
        .as_ref()
        .and_then(|message| message.message_id.as_deref());
    let live_message = crate::delivery::message_template(frame);
    let mut invocation = scripts::OUTBOX_APPEND.prepare_invoke();
    invocation
        .key(keys.outbox())
        .key(keys.outbox_meta())
        .key(effects_key)
        .key(keys.legacy_chat_fence(&request.chat_id))
        .key(keys.history(&request.chat_id))
        .key(keys.messages())
        .arg(
            request
                .fence
                .map(|fence| fence.to_string())
                .unwrap_or_default(),
        )
        .arg(effect_field)
        .arg(&frame.frame_json)
        .arg(frame.origin_device.as_deref().unwrap_or(""))
        .arg(
            frame
                .request_id
                .map(|id| id.to_string())
                .unwrap_or_default(),
        )
        .arg(frame.target_device.as_deref().unwrap_or(""))
        .arg(OUTBOX_MAX_LEN)
        .arg(now_ms)
        .arg(history_json.as_deref().unwrap_or(""))
        .arg(seq_base(now_ms))
        .arg(TURN_EFFECTS_TTL_SECS)
        .arg(OUTBOX_RETENTION_SECS)
        .arg(if request.outboxed { "1" } else { "0" })
        .arg(history_message_id.unwrap_or(""))
        .arg(&request.chat_id)
        .arg(frame.trace_parent.as_deref().unwrap_or(""))
        .arg(REBASE_JUMP)
        .arg(LOST_RANGES_KEPT)
        .arg(EXPIRY_RENEWAL_SECS)
        .arg(AccountKeys::history_renewed_field(&request.chat_id))
        .arg(live_message)
        .arg(keys.live())
        .arg(AccountKeys::chat_fence_field(&request.chat_id));
    match &request.indexed {
        Some(message) => search::add_index_arguments(&mut invocation, &frame.account, message),
        None => {
            invocation.arg("");
        }
    }
    let reply: Vec<redis::Value> = invocation.invoke_async(conn).await?;
    let number = |index: usize| -> u64 {
        reply
            .get(index)
            .and_then(|value| redis::from_redis_value_ref::<u64>(value).ok())
            .unwrap_or(0)
    };
    let seq = Some(number(1)).filter(|&seq| seq > 0);
    Ok(match number(0) {
        1 => AppendOutcome::Written { seq },
        2 => AppendOutcome::AlreadyWritten { seq },
        _ => AppendOutcome::Fenced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recreated_outbox_starts_above_every_old_cursor() {
        let old_cursor = seq_base(1_000_000) + 5_000;
        assert!(seq_base(1_000_000 + 60_000) > old_cursor);
    }
}
