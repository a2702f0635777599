//! One device's position in its account's outbox, and the rules that make every
//! outboxed frame reach the device exactly once and in order: live frames, `sync`
//! replays and gap fills all pass through here.
//!
//! Pure state, no I/O: the session actor performs the reads this module asks for.

use std::collections::VecDeque;
use std::sync::Arc;

use iris_shared::delivery::RoutedFrame;
use iris_shared::outbox::{OutboxWindow, SyncPlan};

/// What to do with a live frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveStep {
    /// Send it now.
    Send(Arc<RoutedFrame>),
    /// Held until a replay ends or the first `sync` arrives.
    Held,
    /// Already delivered (or covered by a sync); drop it.
    Duplicate,
    /// Frames are missing before it: read the outbox range `(after, to]`; the frame is held.
    FillGap(ReplayRange),
}

/// An outbox range to replay, `(after, to]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayRange {
    /// Last seq not to replay.
    pub after: u64,
    /// Last seq to replay.
    pub to: u64,
}

/// How a `sync {cursor}` is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncStart {
    /// Nothing to replay: answer `sync.done {cursor}` now.
    Done {
        /// Cursor to report.
        cursor: u64,
    },
    /// Replay the range, then answer `sync.done`.
    Replay(ReplayRange),
    /// The cursor cannot be served: answer `sync.done {cursor: head, reset: true}`.
    Reset {
        /// Head the device continues from.
        head: u64,
    },
}

/// One device's delivery position.
#[derive(Debug)]
pub struct DeliveryCursor {
    /// Highest seq handled for this device (sent, or known to be on it).
    delivered: u64,
    /// Outbox head when the device paired: frames up to it are the device's to `sync`.
    live_from: u64,
    /// Whether outboxed frames flow live (after the first `sync` or its grace period).
    live_started: bool,
    /// The replay in progress, if any; live frames are held meanwhile.
    replay: Option<ReplayRange>,
    /// Next seq the replay must see; a different one means the outbox lost frames.
    replay_next: u64,
    /// Live frames waiting for the replay or the first sync, in arrival order.
    held: VecDeque<Arc<RoutedFrame>>,
    /// Highest seq known to be in the outbox that was not handed over live (the device
    /// fell behind and the node left it in the outbox); read from there before `held`.
    owed: u64,
}

/// The outbox no longer holds a frame a replay needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("outbox frame {missing} is gone (trimmed or lost)")]
pub struct ReplayBroken {
    /// The first missing seq.
    pub missing: u64,
}

impl DeliveryCursor {
    /// A device that just paired while the outbox head was `head`.
    pub fn new(head: u64) -> Self {
        Self {
            delivered: head,
            live_from: head,
            live_started: false,
            replay: None,
            replay_next: 0,
            held: VecDeque::new(),
            owed: 0,
        }
    }

    /// Highest seq handled for this device.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// A frame arrived from the node's delivery stream.
    pub fn on_live(&mut self, frame: Arc<RoutedFrame>) -> LiveStep {
        if self.replay.is_some() || !self.live_started {
            self.held.push_back(frame);
            return LiveStep::Held;
        }
        self.route(frame)
    }

    fn route(&mut self, frame: Arc<RoutedFrame>) -> LiveStep {
        match frame.seq {
            None => LiveStep::Send(frame),
            Some(seq) if seq <= self.delivered => LiveStep::Duplicate,
            Some(seq) if seq == self.delivered + 1 => {
                self.delivered = seq;
                LiveStep::Send(frame)
            }
            Some(seq) => {
                let range = ReplayRange {
                    after: self.delivered,
                    to: seq - 1,
                };
                self.held.push_front(frame);
                self.begin_replay(range);
                LiveStep::FillGap(range)
            }
        }
    }

    /// Outboxed frames up to `through` were not handed over live (the device fell behind,
    /// or Redis was unreachable). Returns the range to read now, if the cursor is
    /// live and not replaying; otherwise the current replay or sync reads it when it ends.
    pub fn on_skipped(&mut self, through: u64) -> Option<ReplayRange> {
        self.owed = self.owed.max(through);
        if self.replay.is_some() || !self.live_started {
            return None;
        }
        self.replay_owed()
    }

    /// Starts reading what is owed, if anything is.
    fn replay_owed(&mut self) -> Option<ReplayRange> {
        if self.owed <= self.delivered {
            return None;
        }
        let range = ReplayRange {
            after: self.delivered,
            to: self.owed,
        };
        self.begin_replay(range);
        Some(range)
    }

    fn begin_replay(&mut self, range: ReplayRange) {
        self.replay = Some(range);
        self.replay_next = range.after + 1;
    }

    /// The device asked for `sync {cursor}` and the outbox window is `window`.
    /// Must not be called while a replay is in progress.
    pub fn begin_sync(&mut self, cursor: u64, window: OutboxWindow) -> SyncStart {
        match window.plan(cursor) {
            SyncPlan::Reset { head } => {
                self.delivered = self.delivered.max(head);
                self.live_started = true;
                SyncStart::Reset { head }
            }
            SyncPlan::UpToDate => {
                if !self.live_started {
                    self.delivered = self.delivered.max(cursor);
                    self.live_started = true;
                }
                SyncStart::Done {
                    cursor: self.delivered,
                }
            }
            SyncPlan::Replay { cursor, head } => {
                // Before live delivery starts the device is owed everything up to the head;
                // after, live delivery has covered what followed `live_from`.
                let to = if self.live_started {
                    self.live_from
                } else {
                    head
                };
                if cursor >= to {
                    if !self.live_started {
                        self.delivered = self.delivered.max(cursor);
                        self.live_started = true;
                    }
                    return SyncStart::Done {
                        cursor: self.delivered,
                    };
                }
                let range = ReplayRange { after: cursor, to };
                self.begin_replay(range);
                SyncStart::Replay(range)
            }
        }
    }

    /// Frames read for the replay in progress, oldest first; returns those to send and
    /// whether the replay has reached its end.
    pub fn on_replayed(
        &mut self,
        frames: Vec<RoutedFrame>,
        page_was_full: bool,
    ) -> Result<(Vec<RoutedFrame>, bool), ReplayBroken> {
        let Some(range) = self.replay else {
            return Ok((Vec::new(), true));
        };
        let mut to_send = Vec::with_capacity(frames.len());
        let mut reached_end = !page_was_full;
        for frame in frames {
            let Some(seq) = frame.seq else { continue };
            if seq > range.to {
                reached_end = true;
                break;
            }
            if seq != self.replay_next {
                return Err(ReplayBroken {
                    missing: self.replay_next,
                });
            }
            self.replay_next = seq + 1;
            to_send.push(frame);
        }
        if self.replay_next > range.to {
            reached_end = true;
        }
        if reached_end && self.replay_next <= range.to {
            return Err(ReplayBroken {
                missing: self.replay_next,
            });
        }
        Ok((to_send, reached_end))
    }

    /// Where the next replay page starts (exclusive).
    pub fn replay_after(&self) -> u64 {
        self.replay_next.saturating_sub(1)
    }

    /// Ends the replay (or the sync grace period) and releases held frames: returns those
    /// to send now, and a new gap to fill if one shows up among them.
    pub fn finish_replay(&mut self) -> (Vec<Arc<RoutedFrame>>, Option<ReplayRange>) {
        if let Some(range) = self.replay.take() {
            self.delivered = self.delivered.max(range.to);
        }
        self.live_started = true;
        // Frames left in the outbox precede everything held (held frames of those seqs
        // turn out duplicates), so they are read first.
        if let Some(range) = self.replay_owed() {
            return (Vec::new(), Some(range));
        }
        let mut to_send = Vec::new();
        while let Some(frame) = self.held.pop_front() {
            match self.route(frame) {
                LiveStep::Send(frame) => to_send.push(frame),
                LiveStep::FillGap(range) => return (to_send, Some(range)),
                LiveStep::Held | LiveStep::Duplicate => {}
            }
        }
        (to_send, None)
    }

    /// Starts live delivery without a sync (the grace period ran out).
    pub fn start_live(&mut self) -> (Vec<Arc<RoutedFrame>>, Option<ReplayRange>) {
        if self.live_started || self.replay.is_some() {
            return (Vec::new(), None);
        }
        self.finish_replay()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: Option<u64>) -> Arc<RoutedFrame> {
        Arc::new(RoutedFrame::new("a", seq, "{}"))
    }

    fn seqs(frames: &[RoutedFrame]) -> Vec<u64> {
        frames.iter().filter_map(|f| f.seq).collect()
    }

    fn window(head: u64, oldest: u64) -> OutboxWindow {
        OutboxWindow {
            head,
            oldest: Some(oldest),
        }
    }

    #[test]
    fn frames_wait_for_the_first_sync_then_flow_after_the_replay() {
        let mut cursor = DeliveryCursor::new(10);
        assert_eq!(cursor.on_live(frame(Some(11))), LiveStep::Held);
        let start = cursor.begin_sync(7, window(11, 1));
        assert_eq!(start, SyncStart::Replay(ReplayRange { after: 7, to: 11 }));
        let page: Vec<_> = (8..=11).map(|s| (*frame(Some(s))).clone()).collect();
        let (sent, done) = cursor.on_replayed(page, false).unwrap();
        assert_eq!(seqs(&sent), vec![8, 9, 10, 11]);
        assert!(done);
        let (released, gap) = cursor.finish_replay();
        assert!(released.is_empty(), "seq 11 was replayed, not sent twice");
        assert_eq!(gap, None);
        assert!(matches!(cursor.on_live(frame(Some(12))), LiveStep::Send(_)));
    }

    #[test]
    fn a_late_sync_replays_only_what_preceded_pairing() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.start_live();
        assert!(matches!(cursor.on_live(frame(Some(11))), LiveStep::Send(_)));
        let start = cursor.begin_sync(8, window(11, 1));
        assert_eq!(start, SyncStart::Replay(ReplayRange { after: 8, to: 10 }));
    }

    #[test]
    fn a_gap_in_live_frames_is_filled_from_the_outbox_before_the_frame() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.start_live();
        let step = cursor.on_live(frame(Some(13)));
        assert_eq!(step, LiveStep::FillGap(ReplayRange { after: 10, to: 12 }));
        assert_eq!(cursor.on_live(frame(None)), LiveStep::Held);
        let page: Vec<_> = (11..=13).map(|s| (*frame(Some(s))).clone()).collect();
        let (sent, done) = cursor.on_replayed(page, false).unwrap();
        assert_eq!(seqs(&sent), vec![11, 12]);
        assert!(done);
        let (released, gap) = cursor.finish_replay();
        assert_eq!(released.len(), 2);
        assert_eq!(released[0].seq, Some(13));
        assert_eq!(gap, None);
    }

    #[test]
    fn frames_left_in_the_outbox_are_read_before_the_catch_up_frames() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.start_live();
        assert_eq!(
            cursor.on_skipped(14),
            Some(ReplayRange { after: 10, to: 14 })
        );
        assert_eq!(cursor.on_live(frame(None)), LiveStep::Held);
        let page: Vec<_> = (11..=14).map(|s| (*frame(Some(s))).clone()).collect();
        let (sent, done) = cursor.on_replayed(page, false).unwrap();
        assert_eq!(seqs(&sent), vec![11, 12, 13, 14]);
        assert!(done);
        let (released, gap) = cursor.finish_replay();
        assert_eq!(released.len(), 1, "the held live frame follows the replay");
        assert_eq!(gap, None);
        assert_eq!(cursor.delivered(), 14);
    }

    #[test]
    fn frames_skipped_during_a_sync_are_read_when_the_sync_ends() {
        let mut cursor = DeliveryCursor::new(10);
        let start = cursor.begin_sync(8, window(10, 1));
        assert_eq!(start, SyncStart::Replay(ReplayRange { after: 8, to: 10 }));
        assert_eq!(cursor.on_skipped(12), None, "the sync is still running");
        let page: Vec<_> = (9..=10).map(|s| (*frame(Some(s))).clone()).collect();
        cursor.on_replayed(page, false).unwrap();
        let (released, gap) = cursor.finish_replay();
        assert!(released.is_empty());
        assert_eq!(gap, Some(ReplayRange { after: 10, to: 12 }));
    }

    #[test]
    fn duplicates_of_delivered_frames_are_dropped() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.start_live();
        assert!(matches!(cursor.on_live(frame(Some(11))), LiveStep::Send(_)));
        assert_eq!(cursor.on_live(frame(Some(11))), LiveStep::Duplicate);
    }

    #[test]
    fn a_cursor_the_outbox_cannot_serve_resets() {
        let mut cursor = DeliveryCursor::new(100);
        assert_eq!(
            cursor.begin_sync(3, window(100, 50)),
            SyncStart::Reset { head: 100 }
        );
    }

    #[test]
    fn a_replay_that_finds_a_hole_is_broken_not_partial() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.begin_sync(5, window(10, 1));
        let page = vec![(*frame(Some(6))).clone(), (*frame(Some(8))).clone()];
        assert_eq!(
            cursor.on_replayed(page, false),
            Err(ReplayBroken { missing: 7 })
        );
    }

    #[test]
    fn a_replay_pages_until_it_reaches_its_end() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.begin_sync(4, window(10, 1));
        let first: Vec<_> = (5..=7).map(|s| (*frame(Some(s))).clone()).collect();
        let (_, done) = cursor.on_replayed(first, true).unwrap();
        assert!(!done);
        assert_eq!(cursor.replay_after(), 7);
        let second: Vec<_> = (8..=10).map(|s| (*frame(Some(s))).clone()).collect();
        let (sent, done) = cursor.on_replayed(second, true).unwrap();
        assert_eq!(seqs(&sent), vec![8, 9, 10]);
        assert!(done);
    }

    #[test]
    fn catching_up_after_an_outage_replays_only_what_was_missed() {
        let mut cursor = DeliveryCursor::new(10);
        cursor.start_live();
        assert_eq!(cursor.on_skipped(10), None, "nothing was missed");
        assert_eq!(
            cursor.on_skipped(12),
            Some(ReplayRange { after: 10, to: 12 })
        );
        assert_eq!(cursor.on_skipped(13), None, "not while a replay runs");
        let page: Vec<_> = (11..=12).map(|s| (*frame(Some(s))).clone()).collect();
        cursor.on_replayed(page, false).unwrap();
        let (_, gap) = cursor.finish_replay();
        assert_eq!(
            gap,
            Some(ReplayRange { after: 12, to: 13 }),
            "the head seen during the replay is read when it ends"
        );
    }
}
