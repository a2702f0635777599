//! What a session that fell behind its device is still owed, kept in bounded space.
//!
//! While a session's send queue is full the registry stops queueing frames for it and
//! records them here instead: outboxed frames only as "skipped up to seq N" (the outbox
//! holds them; the session fills the gap from it when it catches up), live-only
//! streaming frames coalesced to the newest per message or tool call (they carry the full
//! current state, and a `message.stop`/`tool.end` makes them stale), and at most
//! [`MAX_LIVE_FRAMES`] other live-only frames, the oldest dropped first.
//!
//! Pure state, no I/O.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iris_shared::delivery::RoutedFrame;
use iris_shared::protocol::{backpressure_role, BackpressureRole, StreamKey};

/// Most live-only frames kept for one session that fell behind.
pub const MAX_LIVE_FRAMES: usize = 64;

/// What happened to a frame offered to a backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// An outboxed frame: left in the outbox, to be replayed.
    Skipped,
    /// A live frame kept (replacing an older one of its stream if `coalesced`).
    Live {
        /// Whether it replaced an older frame of the same stream.
        coalesced: bool,
        /// Whether the backlog was full and dropped its oldest live frame.
        dropped_oldest: bool,
    },
}

/// The frames a lagging session is owed, handed to it when it catches up.
#[derive(Debug, Default)]
pub struct CatchUpFrames {
    /// Highest outboxed seq that was not queued (the session replays up to it).
    pub skipped_through: Option<u64>,
    /// Live-only frames still worth sending, oldest first.
    pub live: Vec<Arc<RoutedFrame>>,
}

/// The backlog of one lagging session.
#[derive(Debug)]
pub struct Backlog {
    since: Instant,
    skipped_through: Option<u64>,
    live: Vec<(Option<StreamKey>, Arc<RoutedFrame>)>,
}

impl Backlog {
    /// An empty backlog: the session fell behind at `now`.
    pub fn new(now: Instant) -> Self {
        Self {
            since: now,
            skipped_through: None,
            live: Vec::new(),
        }
    }

    /// How long the session has been behind.
    pub fn age(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.since)
    }

    /// Records a frame the session could not take now.
    pub fn keep(&mut self, frame: Arc<RoutedFrame>) -> Kept {
        let role = backpressure_role(&frame.frame_json);
        if let BackpressureRole::Ends(key) = &role {
            self.live.retain(|(kept, _)| kept.as_ref() != Some(key));
        }
        if let Some(seq) = frame.seq {
            self.skipped_through = Some(self.skipped_through.map_or(seq, |s| s.max(seq)));
            return Kept::Skipped;
        }
        let key = match role {
            BackpressureRole::Coalescable(key) => Some(key),
            BackpressureRole::Ends(_) | BackpressureRole::Other => None,
        };
        let before = self.live.len();
        if let Some(key) = &key {
            self.live.retain(|(kept, _)| kept.as_ref() != Some(key));
        }
        let coalesced = self.live.len() < before;
        let dropped_oldest = self.live.len() >= MAX_LIVE_FRAMES;
        if dropped_oldest {
            self.live.remove(0);
        }
        self.live.push((key, frame));
        Kept::Live {
            coalesced,
            dropped_oldest,
        }
    }

    /// What the session is owed now that it can take frames again.
    pub fn into_catch_up(self) -> CatchUpFrames {
        CatchUpFrames {
            skipped_through: self.skipped_through,
            live: self.live.into_iter().map(|(_, frame)| frame).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: Option<u64>, json: &str) -> Arc<RoutedFrame> {
        Arc::new(RoutedFrame::new("a", seq, json))
    }

    fn update(message_id: &str, text: &str) -> Arc<RoutedFrame> {
        frame(
            None,
            &format!(
                r#"{{"v":1,"type":"message.update","payload":{{"message_id":"{message_id}","text":"{text}"}}}}"#
            ),
        )
    }

    fn texts(catch_up: &CatchUpFrames) -> Vec<&str> {
        catch_up
            .live
            .iter()
            .map(|f| f.frame_json.as_str())
            .collect()
    }

    #[test]
    fn outboxed_frames_are_only_remembered_by_their_highest_seq() {
        let mut backlog = Backlog::new(Instant::now());
        assert_eq!(backlog.keep(frame(Some(7), "{}")), Kept::Skipped);
        assert_eq!(backlog.keep(frame(Some(9), "{}")), Kept::Skipped);
        let catch_up = backlog.into_catch_up();
        assert_eq!(catch_up.skipped_through, Some(9));
        assert!(catch_up.live.is_empty());
    }

    #[test]
    fn updates_of_one_message_coalesce_to_the_newest() {
        let mut backlog = Backlog::new(Instant::now());
        backlog.keep(update("m1", "a"));
        backlog.keep(update("m2", "x"));
        let kept = backlog.keep(update("m1", "ab"));
        assert_eq!(
            kept,
            Kept::Live {
                coalesced: true,
                dropped_oldest: false
            }
        );
        let catch_up = backlog.into_catch_up();
        assert_eq!(catch_up.live.len(), 2);
        assert!(texts(&catch_up)[0].contains("\"x\""));
        assert!(texts(&catch_up)[1].contains("\"ab\""));
    }

    #[test]
    fn a_stop_makes_the_message_s_kept_update_stale() {
        let mut backlog = Backlog::new(Instant::now());
        backlog.keep(update("m1", "a"));
        let stop = r#"{"v":1,"type":"message.stop","payload":{"message_id":"m1"}}"#;
        assert_eq!(backlog.keep(frame(Some(12), stop)), Kept::Skipped);
        let catch_up = backlog.into_catch_up();
        assert!(catch_up.live.is_empty());
        assert_eq!(catch_up.skipped_through, Some(12));
    }

    #[test]
    fn other_live_frames_are_bounded_oldest_first() {
        let mut backlog = Backlog::new(Instant::now());
        for i in 0..MAX_LIVE_FRAMES + 3 {
            backlog.keep(frame(None, &format!(r#"{{"type":"typing","n":{i}}}"#)));
        }
        let catch_up = backlog.into_catch_up();
        assert_eq!(catch_up.live.len(), MAX_LIVE_FRAMES);
        assert!(texts(&catch_up)[0].contains("\"n\":3}"));
    }

    #[test]
    fn age_counts_from_falling_behind() {
        let start = Instant::now();
        let backlog = Backlog::new(start);
        assert_eq!(
            backlog.age(start + Duration::from_millis(250)),
            Duration::from_millis(250)
        );
    }
}
