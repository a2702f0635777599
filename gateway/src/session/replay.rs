//! Replays from the outbox: answering `sync {cursor}` and filling seq gaps in live
//! delivery. Pages are read one at a time, so a long catch-up never asks Redis for an
//! unbounded reply. A replay that finds the device's last seq in a range a rebase of the
//! outbox lost resets the device (`sync.done {reset: true}`, answering the sync or
//! unsolicited) instead.

use actix::prelude::*;
use actix_web_actors::ws;

use iris_shared::clock::now_ms;
use iris_shared::outbox::{self, REPLAY_PAGE};
use iris_shared::protocol::{ErrorCode, ServerBody, ServerFrame, SyncDone};

use super::Session;
use crate::close_codes;
use crate::cursor::{ReplayRange, Replayed, SyncStart};
use crate::metrics;

/// Why a replay runs.
#[derive(Debug, Clone, Copy)]
pub(super) enum ReplayPurpose {
    /// Answering `sync`; `sync.done` (with this request id) follows the last frame.
    Sync {
        /// The sync request's id.
        request_id: Option<u64>,
        /// When the sync request was taken up.
        started: std::time::Instant,
    },
    /// Live delivery skipped seqs; they are fetched before the frame that revealed them.
    GapFill,
}

impl Session {
    /// Handles `sync {cursor}`: reads the outbox window, then replays or resets.
    pub(super) fn begin_sync(
        &mut self,
        request_id: Option<u64>,
        cursor: u64,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(device) = &self.device else { return };
        metrics::incr(&self.state.metrics.syncs_total);
        let started = std::time::Instant::now();
        self.awaiting_window = true;
        let redis = self.state.redis.clone();
        let account = device.account.clone();
        let read_window = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            outbox::window(&mut conn, &account, now_ms())
                .await
                .map_err(|err| err.to_string())
        };
        ctx.spawn(read_window.into_actor(self).map(move |result, act, ctx| {
            act.awaiting_window = false;
            let window = match result {
                Ok(window) => window,
                Err(err) => return act.give_up_on_backend(ctx, Some(request_id), &err),
            };
            let Some(device_cursor) = act.cursor.as_mut() else {
                return;
            };
            match device_cursor.begin_sync(cursor, window) {
                SyncStart::Replay(range) => act.start_replay(
                    range,
                    ReplayPurpose::Sync {
                        request_id,
                        started,
                    },
                    ctx,
                ),
                SyncStart::Done { cursor } => {
                    act.send_sync_done(ctx, request_id, cursor, false);
                    act.state
                        .metrics
                        .sync_replay_seconds
                        .observe(started.elapsed());
                    act.release_held(ctx);
                }
                SyncStart::Reset { head } => {
                    metrics::incr(&act.state.metrics.sync_resets_total);
                    act.send_sync_done(ctx, request_id, head, true);
                    act.state
                        .metrics
                        .sync_replay_seconds
                        .observe(started.elapsed());
                    act.release_held(ctx);
                }
            }
        }));
    }

    /// The outbox cannot be read: answer the sync (if one is waiting) with an error and
    /// close with a reconnect code, rather than leave the device with a partial replay.
    pub(super) fn give_up_on_backend(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
        sync_request: Option<Option<u64>>,
        err: &str,
    ) {
        metrics::incr(&self.state.metrics.redis_errors_total);
        tracing::warn!(%err, session = self.id, "cannot read the outbox");
        if let Some(request_id) = sync_request {
            let message = "sync failed; reconnect and retry";
            self.send_error(ctx, request_id, ErrorCode::Internal, message);
        }
        self.close(ctx, close_codes::BACKEND_UNAVAILABLE, "backend unavailable");
    }

    pub(super) fn send_sync_done(
        &self,
        ctx: &mut ws::WebsocketContext<Self>,
        request_id: Option<u64>,
        cursor: u64,
        reset: bool,
    ) {
        let done = SyncDone {
            cursor: Some(cursor),
            reset: reset.then_some(true),
        };
        self.send(
            ctx,
            ServerFrame::new(ServerBody::SyncDone(done)).with_id(request_id),
        );
    }

    /// The first-sync grace period is over: outboxed frames flow live from now on.
    pub(super) fn end_sync_grace(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        if self.awaiting_window {
            return;
        }
        let (to_send, gap) = cursor.start_live();
        self.send_released(to_send, gap, ctx);
    }

    /// Releases frames held during a sync or replay.
    fn release_held(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        let (to_send, gap) = cursor.finish_replay();
        self.send_released(to_send, gap, ctx);
    }

    fn send_released(
        &mut self,
        to_send: Vec<std::sync::Arc<iris_shared::delivery::RoutedFrame>>,
        gap: Option<ReplayRange>,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        for frame in &to_send {
            self.send_routed(ctx, frame);
        }
        match gap {
            Some(range) => {
                metrics::incr(&self.state.metrics.gap_fills_total);
                self.start_replay(range, ReplayPurpose::GapFill, ctx);
            }
            None => self.drain_deferred(ctx),
        }
    }

    /// Starts replaying `range`; requests wait until it ends.
    pub(super) fn start_replay(
        &mut self,
        range: ReplayRange,
        purpose: ReplayPurpose,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        tracing::debug!(session = self.id, ?range, ?purpose, "replay");
        self.replay = Some(purpose);
        self.fetch_replay_page(ctx);
    }

    fn fetch_replay_page(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        let (Some(device), Some(cursor)) = (&self.device, &self.cursor) else {
            return;
        };
        let redis = self.state.redis.clone();
        let account = device.account.clone();
        let after = cursor.replay_after();
        let read_page = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            outbox::read_after(&mut conn, &account, after, REPLAY_PAGE)
                .await
                .map_err(|err| err.to_string())
        };
        ctx.spawn(
            read_page
                .into_actor(self)
                .map(|result, act, ctx| match result {
                    Ok(page) => act.on_replay_page(page, ctx),
                    Err(err) => {
                        let sync_request = match act.replay {
                            Some(ReplayPurpose::Sync { request_id, .. }) => Some(request_id),
                            _ => None,
                        };
                        act.give_up_on_backend(ctx, sync_request, &err);
                    }
                }),
        );
    }

    fn on_replay_page(&mut self, page: outbox::ReplayPage, ctx: &mut ws::WebsocketContext<Self>) {
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        let page_was_full = page.frames.len() == REPLAY_PAGE;
        match cursor.on_replayed(page, page_was_full) {
            Ok(Replayed::Frames {
                to_send,
                reached_end,
            }) => {
                metrics::add(
                    &self.state.metrics.replayed_frames_total,
                    to_send.len() as u64,
                );
                // The next page is asked for first, so Redis reads it while this one is
                // written; its answer is handled after this handler, so order holds.
                if !reached_end {
                    self.fetch_replay_page(ctx);
                }
                for frame in &to_send {
                    self.send_routed(ctx, frame);
                }
                if reached_end {
                    self.finish_replay(ctx);
                }
            }
            Ok(Replayed::Lost { head }) => self.reset_lost_position(head, ctx),
            Err(broken) => {
                tracing::info!(session = self.id, %broken, "replay cannot be completed");
                if let Some(ReplayPurpose::Sync { request_id, .. }) = self.replay.take() {
                    self.send_error(
                        ctx,
                        request_id,
                        ErrorCode::Internal,
                        "the outbox changed during the replay; reconnect and sync again",
                    );
                }
                self.close(
                    ctx,
                    close_codes::RESYNC_REQUIRED,
                    "outbox incomplete; sync again",
                );
            }
        }
    }

    /// The device saw frames a rebase of the outbox lost: it is reset to `head` like any
    /// device whose cursor cannot be served, answering its sync if this replay is one and
    /// unsolicited otherwise (as after Redis lost its data); frames held meanwhile follow.
    fn reset_lost_position(&mut self, head: u64, ctx: &mut ws::WebsocketContext<Self>) {
        let purpose = self.replay.take();
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        tracing::info!(
            session = self.id,
            delivered = cursor.delivered(),
            head,
            "the device saw frames the outbox lost; resetting it"
        );
        let (to_send, gap) = cursor.reset_to(head);
        metrics::incr(&self.state.metrics.sync_resets_total);
        let request_id = match purpose {
            Some(ReplayPurpose::Sync {
                request_id,
                started,
            }) => {
                self.state
                    .metrics
                    .sync_replay_seconds
                    .observe(started.elapsed());
                request_id
            }
            _ => None,
        };
        self.send_sync_done(ctx, request_id, head, true);
        self.send_released(to_send, gap, ctx);
    }

    fn finish_replay(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        let purpose = self.replay.take();
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        let (to_send, gap) = cursor.finish_replay();
        if let Some(ReplayPurpose::Sync {
            request_id,
            started,
        }) = purpose
        {
            let delivered = cursor.delivered();
            self.send_sync_done(ctx, request_id, delivered, false);
            self.state
                .metrics
                .sync_replay_seconds
                .observe(started.elapsed());
        }
        self.send_released(to_send, gap, ctx);
    }
}
