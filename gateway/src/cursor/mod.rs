//! One device's position in its account's outbox, and the rules that make every
//! outboxed frame reach the device exactly once and in order: live frames, `sync`
//! replays and gap fills all pass through here.
//!
//! A rebased outbox (see `iris_shared::outbox::lost`) has a jump in its seqs: a replay
//! steps over it when the device's position is at or before its start, and reports the
//! device lost (to be reset) when its last seq lies inside.
//!
//! Pure state, no I/O: the session actor performs the reads this module asks for.

use std::collections::VecDeque;
use std::sync::Arc;

use iris_shared::delivery::RoutedFrame;
use iris_shared::outbox::{OutboxWindow, ReplayPage, SyncPlan};

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

/// What a replayed page means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replayed {
    /// Frames to send, and whether the replay has reached its end.
    Frames {
        /// The page's frames the device is owed, in order.
        to_send: Vec<RoutedFrame>,
        /// Whether the replay is over.
        reached_end: bool,
    },
    /// The device's last seq lies in a range a rebase of the outbox lost: it saw frames
    /// that are gone, and must be reset ([`DeliveryCursor::reset_to`]) to `head`.
    Lost {
        /// The outbox head when the page was read.
        head: u64,
    },
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

    /// A page read for the replay in progress (frames oldest first, with the outbox's lost
    /// ranges): the frames to send and whether the replay has reached its end, or that
    /// the device's position was lost.
    pub fn on_replayed(
        &mut self,
        page: ReplayPage,
        page_was_full: bool,
    ) -> Result<Replayed, ReplayBroken> {
        let Some(range) = self.replay else {
            return Ok(Replayed::Frames {
                to_send: Vec::new(),
                reached_end: true,
            });
        };
        let position = self.replay_next.saturating_sub(1);
        if page.lost.contains(position) {
            return Ok(Replayed::Lost { head: page.head });
        }
        // The jumps of rebases hold no frame: the next one may come after one.
        self.replay_next = page.lost.skip(position) + 1;
        let mut to_send = Vec::with_capacity(page.frames.len());
        let mut reached_end = !page_was_full;
        for frame in page.frames {
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
            self.replay_next = page.lost.skip(seq) + 1;
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
        Ok(Replayed::Frames {
            to_send,
            reached_end,
        })
    }

    /// The device is reset to `head` (it reloads history): the replay in progress ends,
    /// and held frames are released as after any replay (those up to `head` are dropped,
    /// the history covers them).
    pub fn reset_to(&mut self, head: u64) -> (Vec<Arc<RoutedFrame>>, Option<ReplayRange>) {
        self.replay = None;
        self.delivered = self.delivered.max(head);
        self.finish_replay()
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
mod tests;
