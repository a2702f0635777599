//! How a session follows the backend's state: it tells its device `status {degraded}`
//! when the node loses Redis and `status {online}` when it is back, then catches up on
//! frames live delivery missed meanwhile; when Redis lost its data it resets the device
//! with an unsolicited `sync.done {cursor: <new head>, reset: true}`.

use actix::prelude::*;
use actix_web_actors::ws;

use iris_shared::clock::now_ms;
use iris_shared::outbox;
use iris_shared::protocol::{ServerBody, ServerFrame, Status, StatusState};

use super::replay::ReplayPurpose;
use super::{Phase, Session};
use crate::backend_notice::BackendNotice;
use crate::cursor::DeliveryCursor;
use crate::metrics;

/// How soon a catch-up read that failed after the live subscription came back is tried again.
const CATCH_UP_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

impl Session {
    fn send_status(&self, ctx: &mut ws::WebsocketContext<Self>, state: StatusState) {
        let status = Status {
            state: Some(state),
            session: None,
        };
        self.send(ctx, ServerFrame::new(ServerBody::Status(status)));
    }

    /// Reads the outbox head, then `then` with it (a failed read closes the session with
    /// a reconnect code, like any replay that cannot be served).
    fn with_outbox_head(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
        then: impl FnOnce(u64, &mut Self, &mut ws::WebsocketContext<Self>) + 'static,
    ) {
        self.read_outbox_head(ctx, move |result, act, ctx| match result {
            Ok(head) => then(head, act, ctx),
            Err(err) => act.give_up_on_backend(ctx, None, &err),
        });
    }

    /// Reads the outbox head, then `then` with the outcome.
    fn read_outbox_head(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
        then: impl FnOnce(Result<u64, String>, &mut Self, &mut ws::WebsocketContext<Self>) + 'static,
    ) {
        let Some(device) = &self.device else { return };
        let redis = self.state.redis.clone();
        let account = device.account.clone();
        let read_head = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            outbox::window(&mut conn, &account, now_ms())
                .await
                .map(|window| window.head)
                .map_err(|err| err.to_string())
        };
        ctx.spawn(
            read_head
                .into_actor(self)
                .map(move |result, act, ctx| then(result, act, ctx)),
        );
    }

    /// The node's live subscription was made again: fill what it missed up to the head.
    /// Redis may not answer every connection yet (the subscription can come back before
    /// the pool's connections do), so a failed read is tried again shortly; once the node
    /// counts Redis as unreachable, the `online` notice that follows catches up instead.
    fn catch_up_after_resubscribing(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        self.read_outbox_head(ctx, |result, act, ctx| match result {
            Ok(head) => act.catch_up_to(head, ctx),
            Err(_) if act.state.is_degraded() => {}
            Err(err) => {
                tracing::debug!(%err, session = act.id, "catch-up read failed; trying again");
                ctx.run_later(CATCH_UP_RETRY, |act, ctx| {
                    act.catch_up_after_resubscribing(ctx)
                });
            }
        });
    }

    /// Redis is back with its data: fill whatever live delivery missed up to the head.
    fn catch_up_after_outage(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        self.with_outbox_head(ctx, |head, act, ctx| act.catch_up_to(head, ctx));
    }

    /// Replays whatever up to `head` this session has not delivered.
    fn catch_up_to(&mut self, head: u64, ctx: &mut ws::WebsocketContext<Self>) {
        if self.awaiting_window {
            return; // a sync is about to replay from the outbox anyway
        }
        // Everything up to the head is owed; a replay under way reads it when it ends.
        let Some(range) = self.cursor.as_mut().and_then(|c| c.on_skipped(head)) else {
            return;
        };
        tracing::info!(
            session = self.id,
            ?range,
            "catching up on what live delivery missed"
        );
        metrics::incr(&self.state.metrics.gap_fills_total);
        self.start_replay(range, ReplayPurpose::GapFill, ctx);
    }

    /// Redis lost the outbox: the device continues from the new head, and is told so.
    fn reset_after_data_loss(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        self.with_outbox_head(ctx, |head, act, ctx| {
            let mut cursor = DeliveryCursor::new(head);
            // Frames held for the old cursor belong to the lost outbox or precede the head.
            let _ = cursor.start_live();
            act.cursor = Some(cursor);
            act.replay = None;
            metrics::incr(&act.state.metrics.sync_resets_total);
            act.send_sync_done(ctx, None, head, true);
            act.drain_deferred(ctx);
        });
    }
}

impl Handler<BackendNotice> for Session {
    type Result = ();

    fn handle(&mut self, notice: BackendNotice, ctx: &mut Self::Context) {
        if !matches!(self.phase, Phase::Ready) || self.cursor.is_none() {
            return;
        }
        match notice {
            BackendNotice::Degraded => self.send_status(ctx, StatusState::Degraded),
            BackendNotice::Online => {
                self.send_status(ctx, StatusState::Online);
                self.catch_up_after_outage(ctx);
            }
            BackendNotice::PresenceRestored => self.catch_up_after_outage(ctx),
            BackendNotice::LiveResumed => self.catch_up_after_resubscribing(ctx),
            BackendNotice::DataLost(_) => {
                self.send_status(ctx, StatusState::Online);
                self.reset_after_data_loss(ctx);
            }
        }
    }
}
