//! The session's side of backpressure: catching up after it fell behind (frames left in
//! the outbox are read from there, coalesced live frames follow), and closing as a slow
//! consumer when it stayed behind too long. The registry decides which (`registry/session_handle.rs`).

use actix::prelude::*;

use super::Session;
use crate::close_codes;
use crate::metrics;
use crate::registry::Backpressure;

use super::replay::ReplayPurpose;

impl Handler<Backpressure> for Session {
    type Result = ();

    fn handle(&mut self, msg: Backpressure, ctx: &mut Self::Context) {
        match msg {
            Backpressure::CatchUp { frames, bytes } => {
                self.send_queue.release(bytes);
                if let Some(through) = frames.skipped_through {
                    self.catch_up_from_outbox(through, ctx);
                }
                for frame in frames.live {
                    self.accept_live(frame, ctx);
                }
            }
            Backpressure::TooSlow => {
                tracing::info!(session = self.id, "closing a slow consumer");
                self.close(ctx, close_codes::SLOW_CONSUMER, "slow consumer");
            }
        }
    }
}

impl Session {
    /// Outboxed frames up to `through` were left in the outbox for this session.
    fn catch_up_from_outbox(&mut self, through: u64, ctx: &mut <Self as Actor>::Context) {
        let Some(cursor) = self.cursor.as_mut() else {
            self.skipped_early = Some(self.skipped_early.map_or(through, |s| s.max(through)));
            return;
        };
        if let Some(range) = cursor.on_skipped(through) {
            metrics::incr(&self.state.metrics.gap_fills_total);
            self.start_replay(range, ReplayPurpose::GapFill, ctx);
        }
    }
}
