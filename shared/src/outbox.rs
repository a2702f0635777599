//! The per-account outbox: the replay log behind `sync`.
//!
//! Every never-dropped frame of an account gets the next integer `seq` and is appended to
//! `iris:{a:A}:outbox` with entry id `<seq>-0`, so a cursor maps straight onto a stream
//! range. A new outbox starts its seq at `unix_seconds << 20` ([`seq_base`]) rather than 0:
//! if Redis ever loses an outbox and a new one is created, its seqs start far above every
//! cursor the old one handed out, and those cursors are recognised as unservable instead of
//! being mistaken for positions in the new log.

use redis::aio::ConnectionLike;

use crate::delivery::RoutedFrame;
use crate::keys::AccountKeys;
use crate::partition::Partition;
use crate::protocol::MessagePayload;
use crate::scripts;

/// Entries an outbox keeps (at least; trimming is approximate).
pub const OUTBOX_MAX_LEN: u64 = 10_000;
/// An outbox, its head and its history disappear after this long without a write.
pub const OUTBOX_RETENTION_SECS: u64 = 30 * 24 * 3600;
/// How long a turn's written effects are remembered for de-duplicating a replayed turn.
pub const TURN_EFFECTS_TTL_SECS: u64 = 7 * 24 * 3600;
/// Entries read per round trip when replaying.
pub const REPLAY_PAGE: usize = 1_000;

/// First seq of an outbox created at `now_ms`.
pub fn seq_base(now_ms: u64) -> u64 {
    (now_ms / 1000) << 20
}

/// What an outbox can serve right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxWindow {
    /// Seq of the newest frame (or the base, if none was ever written).
    pub head: u64,
    /// Seq of the oldest frame still held, if any.
    pub oldest: Option<u64>,
}

/// What `sync {cursor}` must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPlan {
    /// The device has everything up to the head.
    UpToDate,
    /// Replay every frame with `cursor < seq <= head`.
    Replay {
        /// Last seq the device has.
        cursor: u64,
        /// Head when the sync began.
        head: u64,
    },
    /// The outbox can no longer serve the cursor (trimmed, expired, lost, or from another
    /// outbox); the device must reload history and continue from the head.
    Reset {
        /// Head to continue from.
        head: u64,
    },
}

impl OutboxWindow {
    /// Decides how to serve `cursor`. Never plans a partial replay: a cursor is served
    /// only if every frame after it is still held.
    pub fn plan(&self, cursor: u64) -> SyncPlan {
        if cursor == self.head {
            return SyncPlan::UpToDate;
        }
        match self.oldest {
            Some(oldest) if cursor < self.head && cursor + 1 >= oldest => SyncPlan::Replay {
                cursor,
                head: self.head,
            },
            _ => SyncPlan::Reset { head: self.head },
        }
    }
}

/// Reads the outbox window of `account`, creating its head if it has none.
pub async fn window<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    now_ms: u64,
) -> redis::RedisResult<OutboxWindow> {
    let keys = AccountKeys::new(account);
    let (head, oldest): (u64, i64) = scripts::OUTBOX_WINDOW
        .key(keys.outbox())
        .key(keys.outbox_meta())
        .arg(seq_base(now_ms))
        .arg(OUTBOX_RETENTION_SECS)
        .invoke_async(conn)
        .await?;
    Ok(OutboxWindow {
        head,
        oldest: u64::try_from(oldest).ok(),
    })
}

/// Up to `count` frames of `account` with seq > `after`, oldest first. The reply is
/// decoded straight into frames (entry id and field pairs, moved out of the reply).
pub async fn read_after<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    after: u64,
    count: usize,
) -> redis::RedisResult<Vec<RoutedFrame>> {
    let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg(AccountKeys::new(account).outbox())
        .arg(format!("{}-0", after + 1))
        .arg("+")
        .arg("COUNT")
        .arg(count)
        .query_async(conn)
        .await?;
    Ok(entries
        .into_iter()
        .filter_map(|(id, fields)| {
            let seq = id.split('-').next()?.parse().ok()?;
            RoutedFrame::from_pairs(fields, Some(account), Some(seq))
        })
        .collect())
}

/// The ordinals of the effects of inbound entry `entry_id` of `partition` written so far
/// (how far earlier attempts at the entry got).
pub async fn written_effects<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    partition: Partition,
    entry_id: &str,
) -> redis::RedisResult<Vec<u32>> {
    let fields: Vec<String> = redis::cmd("HKEYS")
        .arg(AccountKeys::new(account).turn_effects(partition, entry_id))
        .query_async(conn)
        .await?;
    Ok(fields
        .iter()
        .filter_map(|field| field.parse().ok())
        .collect())
}

/// Identity of one effect of one inbound entry, so that a turn replayed after a takeover
/// writes each effect once.
#[derive(Debug, Clone)]
pub struct EffectId {
    /// Partition the inbound entry came from.
    pub partition: Partition,
    /// Inbound stream entry id.
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
}

/// Result of [`append`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    /// Written now (`seq` is `None` for live-only frames).
    Written {
        /// Assigned outbox seq.
        seq: Option<u64>,
        /// Gateway nodes holding the account's devices.
        nodes: Vec<String>,
    },
    /// An earlier attempt at the same effect already wrote it.
    AlreadyWritten {
        /// That attempt's seq.
        seq: Option<u64>,
        /// Gateway nodes holding the account's devices.
        nodes: Vec<String>,
    },
    /// A newer owner of the chat has written; this writer must stop.
    Fenced,
}

/// Appends one frame atomically: fence check, de-duplication, seq, outbox, history.
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
    let reply: Vec<redis::Value> = scripts::OUTBOX_APPEND
        .key(keys.outbox())
        .key(keys.outbox_meta())
        .key(effects_key)
        .key(keys.chat_fence(&request.chat_id))
        .key(keys.presence())
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
        .invoke_async(conn)
        .await?;
    let number = |index: usize| -> u64 {
        reply
            .get(index)
            .and_then(|value| redis::from_redis_value_ref::<u64>(value).ok())
            .unwrap_or(0)
    };
    let nodes = reply
        .iter()
        .skip(2)
        .filter_map(|value| redis::from_redis_value_ref::<String>(value).ok())
        .collect();
    let seq = Some(number(1)).filter(|&seq| seq > 0);
    Ok(match number(0) {
        1 => AppendOutcome::Written { seq, nodes },
        2 => AppendOutcome::AlreadyWritten { seq, nodes },
        _ => AppendOutcome::Fenced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(head: u64, oldest: Option<u64>) -> OutboxWindow {
        OutboxWindow { head, oldest }
    }

    #[test]
    fn a_cursor_at_the_head_needs_nothing() {
        assert_eq!(window(10, Some(1)).plan(10), SyncPlan::UpToDate);
        assert_eq!(window(10, None).plan(10), SyncPlan::UpToDate);
    }

    #[test]
    fn a_cursor_inside_the_window_replays_the_rest() {
        assert_eq!(
            window(10, Some(4)).plan(3),
            SyncPlan::Replay {
                cursor: 3,
                head: 10
            }
        );
    }

    #[test]
    fn a_cursor_before_the_oldest_retained_frame_resets() {
        assert_eq!(window(10, Some(5)).plan(3), SyncPlan::Reset { head: 10 });
    }

    #[test]
    fn a_cursor_beyond_the_head_resets() {
        assert_eq!(window(10, Some(1)).plan(11), SyncPlan::Reset { head: 10 });
    }

    #[test]
    fn a_cursor_into_an_emptied_outbox_resets() {
        assert_eq!(window(10, None).plan(9), SyncPlan::Reset { head: 10 });
    }

    #[test]
    fn a_recreated_outbox_starts_above_every_old_cursor() {
        let old_cursor = seq_base(1_000_000) + 5_000;
        assert!(seq_base(1_000_000 + 60_000) > old_cursor);
    }
}
