//! What an outbox can serve (head, oldest frame, lost ranges) and how `sync {cursor}` is
//! answered from that: replay, nothing, or an explicit reset. Never a partial replay.

use redis::aio::ConnectionLike;

use super::lost::LostRanges;
use super::{seq_base, OUTBOX_RETENTION_SECS};
use crate::keys::AccountKeys;
use crate::scripts;

/// What an outbox can serve right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxWindow {
    /// Seq of the newest frame (or the base, if none was ever written).
    pub head: u64,
    /// Seq of the oldest frame still held, if any.
    pub oldest: Option<u64>,
    /// Seqs handed out by a Redis history this outbox no longer has.
    pub lost: LostRanges,
}

/// What `sync {cursor}` must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPlan {
    /// The device has everything up to the head.
    UpToDate,
    /// Replay every frame with `cursor < seq <= head`.
    Replay {
        /// Last seq the device has (moved past a rebase jump that starts at its cursor).
        cursor: u64,
        /// Head when the sync began.
        head: u64,
    },
    /// The outbox can no longer serve the cursor (trimmed, expired, lost, from another
    /// outbox, or inside a range a rebase lost); the device must reload history and
    /// continue from the head.
    Reset {
        /// Head to continue from.
        head: u64,
    },
}

impl OutboxWindow {
    /// A window with nothing lost.
    pub fn new(head: u64, oldest: Option<u64>) -> Self {
        Self {
            head,
            oldest,
            lost: LostRanges::default(),
        }
    }

    /// Decides how to serve `cursor`. Never plans a partial replay: a cursor is served
    /// only if every frame after it is still held.
    pub fn plan(&self, cursor: u64) -> SyncPlan {
        if cursor == self.head {
            return SyncPlan::UpToDate;
        }
        let reset = SyncPlan::Reset { head: self.head };
        if self.lost.contains(cursor) {
            return reset;
        }
        // A jump starting at the cursor holds no frame the device lacks.
        let cursor = self.lost.skip(cursor);
        if cursor == self.head {
            return SyncPlan::UpToDate;
        }
        match self.oldest {
            Some(oldest) if cursor < self.head && cursor + 1 >= oldest => SyncPlan::Replay {
                cursor,
                head: self.head,
            },
            _ => reset,
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
    let (head, oldest, lost, floor): (u64, i64, Option<String>, Option<String>) =
        scripts::OUTBOX_WINDOW
            .key(keys.outbox())
            .key(keys.outbox_meta())
            .arg(seq_base(now_ms))
            .arg(OUTBOX_RETENTION_SECS)
            .invoke_async(conn)
            .await?;
    Ok(OutboxWindow {
        head,
        oldest: u64::try_from(oldest).ok(),
        lost: LostRanges::parse(lost.as_deref(), floor.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(head: u64, oldest: Option<u64>) -> OutboxWindow {
        OutboxWindow::new(head, oldest)
    }

    /// An outbox rebased from 100 to 5_000 (devices may have seen 101..=105 of the old
    /// server), with frames 5_001..=5_010 written since and 1..=100 still held.
    fn rebased() -> OutboxWindow {
        OutboxWindow {
            head: 5_010,
            oldest: Some(1),
            lost: LostRanges::new(0, vec![(100, 5_000)]),
        }
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
    fn a_cursor_inside_a_lost_range_resets() {
        for cursor in [101, 105, 4_999] {
            assert_eq!(
                rebased().plan(cursor),
                SyncPlan::Reset { head: 5_010 },
                "{cursor}"
            );
        }
    }

    #[test]
    fn a_cursor_at_the_start_of_a_lost_range_replays_from_the_rebase_point() {
        assert_eq!(
            rebased().plan(100),
            SyncPlan::Replay {
                cursor: 5_000,
                head: 5_010
            }
        );
    }

    #[test]
    fn a_cursor_before_a_lost_range_replays_across_it() {
        assert_eq!(
            rebased().plan(40),
            SyncPlan::Replay {
                cursor: 40,
                head: 5_010
            }
        );
    }

    #[test]
    fn a_cursor_after_a_lost_range_replays_normally() {
        assert_eq!(
            rebased().plan(5_004),
            SyncPlan::Replay {
                cursor: 5_004,
                head: 5_010
            }
        );
    }

    #[test]
    fn the_start_of_a_lost_range_is_served_even_when_the_frames_before_the_jump_are_trimmed() {
        let trimmed = OutboxWindow {
            oldest: Some(5_001),
            ..rebased()
        };
        assert_eq!(
            trimmed.plan(100),
            SyncPlan::Replay {
                cursor: 5_000,
                head: 5_010
            }
        );
        assert_eq!(trimmed.plan(99), SyncPlan::Reset { head: 5_010 });
    }

    #[test]
    fn a_cursor_below_the_lost_floor_resets() {
        let floored = OutboxWindow {
            lost: LostRanges::new(60, vec![(100, 5_000)]),
            ..rebased()
        };
        assert_eq!(floored.plan(40), SyncPlan::Reset { head: 5_010 });
        assert_eq!(
            floored.plan(61),
            SyncPlan::Replay {
                cursor: 61,
                head: 5_010
            }
        );
    }
}
