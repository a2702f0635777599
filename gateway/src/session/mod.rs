//! The session actor: one per WebSocket. It owns the socket, the heartbeat and the
//! device's delivery cursor; pairing, requests and replays extend it from the files beside
//! this one.
//! Media (uploads, binary chunks, pulls) lives in `media.rs`, `media_pull.rs`,
//! `upload_rules.rs` and `upload_task.rs`; fragmented messages are joined in `fragments.rs`.
//!
//! Lifecycle: `AwaitingHello` → `Pairing` (token check, registration, outbox head) →
//! `Ready`. Frames that arrive while the session is pairing, syncing or filling a gap are
//! deferred and handled in order afterwards, so a client may pipeline `hello` and `sync`.
//! Media requests and chunks are the exception: once paired they are served at once, even
//! during a replay (see `media.rs`).

mod backend_state;
mod backpressure;
mod fragments;
mod history;
mod media;
mod media_pull;
mod pairing;
mod replay;
mod requests;
mod search;
mod upload_rules;
mod upload_task;

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_web_actors::ws;

use iris_shared::clock::now_us;
use iris_shared::delivery::{ChannelChange, RoutedFrame};
use iris_shared::media::frame::MAX_MEDIA_FRAME_BYTES;
use iris_shared::protocol::{
    parse_app_frame_within, AppFrame, ErrorCode, ErrorPayload, ServerBody, ServerFrame, Status,
    StatusState,
};

use crate::close_codes;
use crate::cursor::{DeliveryCursor, LiveStep};
use crate::heartbeat_grid;
use crate::metrics;
use crate::rate_limit::TokenBucket;
use crate::registry::{Deliver, Restarting, Unregister};
use crate::send_queue::{self, SendQueue};
use crate::state::GatewayState;

use replay::ReplayPurpose;

/// Most requests that may wait for a pairing, sync or replay to finish; more are refused
/// with `rate_limited`, so a device cannot make its session hold unbounded input.
const MAX_DEFERRED: usize = 256;

/// Where the session is in its life.
enum Phase {
    /// Connected; the first frame must be `hello`.
    AwaitingHello,
    /// `hello` received; the token and the outbox are being checked.
    Pairing,
    /// Paired: requests are served and frames delivered.
    Ready,
}

/// The paired device.
struct Device {
    /// Its account.
    account: String,
    /// Its id (from `hello.device_id`, or one made up for this connection).
    device_id: String,
    /// Hash of the token it paired with (revocation notices name it).
    token_hash: String,
    /// Chats of the account (with their parent, for threads), kept current by the
    /// channel frames this session delivers.
    chats: HashMap<String, Option<String>>,
}

/// One WebSocket connection.
pub struct Session {
    /// Node-unique id of this connection.
    id: u64,
    /// Node-wide shared state (shared, not copied: it is most of a session's size otherwise).
    state: Arc<GatewayState>,
    /// The client's address, for the per-IP `hello` limit (`None`: unknown, not limited).
    client_ip: Option<IpAddr>,
    /// Life-cycle phase.
    phase: Phase,
    /// The paired device, once known.
    device: Option<Device>,
    /// Last time anything arrived from the client (frame, ping or pong).
    last_heard: Instant,
    /// Requests waiting for pairing, a sync or a replay to finish.
    deferred: VecDeque<AppFrame>,
    /// Frames delivered between registration and the creation of the cursor.
    early: Vec<Arc<RoutedFrame>>,
    /// The device's outbox position (once paired).
    cursor: Option<DeliveryCursor>,
    /// Why the current replay runs, if one does.
    replay: Option<ReplayPurpose>,
    /// A sync's outbox window is being read.
    awaiting_window: bool,
    /// A request's Redis work is in flight; later requests wait so they take effect in
    /// the order sent.
    serving: bool,
    /// How many text frames the device may still send now.
    frame_budget: TokenBucket,
    /// Media uploads and pulls in progress.
    media: media::MediaTransfers,
    /// Bytes the registry queued for this session and it has not handled yet.
    send_queue: Arc<SendQueue>,
    /// Highest outboxed seq left in the outbox for this session before its cursor existed.
    skipped_early: Option<u64>,
    /// The fragmented message being received, if any.
    fragments: fragments::Fragments,
}

impl Session {
    /// A new, unpaired session.
    pub fn new(id: u64, state: Arc<GatewayState>, client_ip: Option<IpAddr>) -> Self {
        let frame_budget = TokenBucket::new(state.limits.frame_rate, state.limits.frame_burst);
        Self {
            id,
            state,
            client_ip,
            phase: Phase::AwaitingHello,
            device: None,
            last_heard: Instant::now(),
            deferred: VecDeque::new(),
            early: Vec::new(),
            cursor: None,
            replay: None,
            awaiting_window: false,
            serving: false,
            frame_budget,
            media: media::MediaTransfers::default(),
            send_queue: Arc::default(),
            skipped_early: None,
            fragments: fragments::Fragments::default(),
        }
    }

    /// Sends one frame as built by the server.
    fn send(&self, ctx: &mut ws::WebsocketContext<Self>, frame: ServerFrame) {
        self.state
            .metrics
            .frames_sent_total
            .incr(frame.body.type_name());
        ctx.text(frame.to_json());
    }

    /// Sends an `error` frame answering request `id`.
    fn send_error(
        &self,
        ctx: &mut ws::WebsocketContext<Self>,
        id: Option<u64>,
        code: ErrorCode,
        message: impl Into<String>,
    ) {
        let error = ServerBody::Error(ErrorPayload::new(code, message));
        self.send(ctx, ServerFrame::new(error).with_id(id));
    }

    /// Sends a routed frame if it is for this device.
    fn send_routed(&mut self, ctx: &mut ws::WebsocketContext<Self>, frame: &RoutedFrame) {
        let Some(device) = self.device.as_mut() else {
            return;
        };
        match frame.channel_change() {
            Some(ChannelChange::Added { chat_id, parent }) => {
                device.chats.insert(chat_id, parent);
            }
            Some(ChannelChange::Removed { chat_id }) => {
                // A deleted channel takes its threads along, whatever order their own
                // `channel.deleted` frames come in.
                device.chats.remove(&chat_id);
                device
                    .chats
                    .retain(|_, parent| parent.as_deref() != Some(chat_id.as_str()));
            }
            Some(ChannelChange::Replaced(chats)) => device.chats = chats.into_iter().collect(),
            None => {}
        }
        if let Some(text) = frame.render_for(&device.device_id) {
            let metrics = &self.state.metrics;
            metrics.frames_sent_total.incr(frame.frame_type());
            if let Some(emitted_us) = frame.emitted_us {
                let elapsed = now_us().saturating_sub(emitted_us);
                metrics
                    .delivery_latency_seconds
                    .observe(Duration::from_micros(elapsed));
            }
            ctx.text(text);
        }
    }

    /// Closes the connection with `code` and stops the actor.
    fn close(&self, ctx: &mut ws::WebsocketContext<Self>, code: u16, reason: &str) {
        ctx.close(Some(ws::CloseReason {
            code: ws::CloseCode::Other(code),
            description: Some(reason.to_owned()),
        }));
        ctx.stop();
    }

    /// Whether requests must wait (pairing, sync window read or replay in progress).
    fn is_blocked(&self) -> bool {
        matches!(self.phase, Phase::Pairing)
            || self.awaiting_window
            || self.serving
            || self.replay.is_some()
    }

    /// Runs a request's Redis work before the next request is served (those wait in
    /// `deferred`), then `finish` with its result. Requests of one device thus take effect
    /// in the order sent, also when several deferred ones are served in one pass.
    fn serve_in_order<R: 'static>(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
        work: impl std::future::Future<Output = R> + 'static,
        finish: impl FnOnce(R, &mut Self, &mut ws::WebsocketContext<Self>) + 'static,
    ) {
        self.serving = true;
        ctx.wait(work.into_actor(self).map(move |result, act, ctx| {
            act.serving = false;
            finish(result, act, ctx);
            act.drain_deferred(ctx);
        }));
    }

    /// Handles deferred requests until one blocks the session again.
    fn drain_deferred(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        while !self.is_blocked() {
            let Some(frame) = self.deferred.pop_front() else {
                return;
            };
            self.handle_request(frame, ctx);
        }
    }

    fn on_text(&mut self, text: &str, ctx: &mut ws::WebsocketContext<Self>) {
        // The codec admits messages as large as a media chunk; text keeps its own limit.
        let limit = self.state.limits.max_frame_bytes;
        if text.len() > limit {
            self.state.metrics.frames_received_total.incr("invalid");
            return self.refuse_oversize(ctx, limit);
        }
        let parsed = parse_app_frame_within(text, &self.state.limits.input);
        let frame_type = parsed.as_ref().map_or("invalid", |f| f.body.type_name());
        self.state.metrics.frames_received_total.incr(frame_type);
        if !self.frame_budget.take() {
            metrics::incr(&self.state.metrics.rate_limited_total);
            let id = parsed.as_ref().ok().and_then(|frame| frame.id);
            let message = "too many frames; slow down and retry";
            self.send_error(ctx, id, ErrorCode::RateLimited, message);
            return;
        }
        match parsed {
            Err(err) => {
                metrics::incr(&self.state.metrics.protocol_errors_total);
                self.send(ctx, err.to_error_frame());
            }
            Ok(frame) if self.is_blocked() && self.is_media_request(&frame) => {
                self.handle_media(frame, ctx);
            }
            Ok(frame) if self.is_blocked() && self.deferred.len() >= MAX_DEFERRED => {
                metrics::incr(&self.state.metrics.rate_limited_total);
                let message = "too many requests waiting; wait for answers and retry";
                self.send_error(ctx, frame.id, ErrorCode::RateLimited, message);
            }
            Ok(frame) if self.is_blocked() => self.deferred.push_back(frame),
            Ok(frame) => self.handle_request(frame, ctx),
        }
    }

    /// A message over `limit` bytes: `error`, then close 1009.
    fn refuse_oversize(&mut self, ctx: &mut ws::WebsocketContext<Self>, limit: usize) {
        metrics::incr(&self.state.metrics.protocol_errors_total);
        self.send_error(
            ctx,
            None,
            ErrorCode::Unsupported,
            format!("message larger than {limit} bytes"),
        );
        self.close(ctx, close_codes::MESSAGE_TOO_BIG, "message too big");
    }

    fn check_heartbeat(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        if self.last_heard.elapsed() > self.state.limits.client_timeout {
            self.close(ctx, close_codes::HEARTBEAT_TIMEOUT, "heartbeat timeout");
            return;
        }
        ctx.ping(b"");
    }

    fn check_hello_arrived(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        if matches!(self.phase, Phase::AwaitingHello) {
            self.send_error(ctx, None, ErrorCode::Auth, "no hello received in time");
            self.close(ctx, close_codes::HELLO_TIMEOUT, "hello timeout");
        }
    }
}

impl Actor for Session {
    type Context = ws::WebsocketContext<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        metrics::shift(&self.state.metrics.connections, 1);
        metrics::incr(&self.state.metrics.connections_accepted_total);
        // Heartbeats tick on the shared grid: one timer wakeup for every session due then.
        let interval = self.state.limits.heartbeat_interval;
        ctx.run_later(
            heartbeat_grid::until_next_point(Instant::now()),
            move |_, ctx| {
                ctx.run_interval(interval, |act, ctx| act.check_heartbeat(ctx));
            },
        );
        ctx.run_later(self.state.limits.hello_timeout, |act, ctx| {
            act.check_hello_arrived(ctx)
        });
    }

    fn stopping(&mut self, _ctx: &mut Self::Context) -> Running {
        metrics::shift(&self.state.metrics.connections, -1);
        self.abort_uploads();
        if let Some(device) = &self.device {
            if matches!(self.phase, Phase::Ready) {
                metrics::shift(&self.state.metrics.paired_devices, -1);
            }
            self.state.registry.do_send(Unregister {
                account: device.account.clone(),
                session_id: self.id,
            });
        }
        Running::Stop
    }
}

impl Handler<Deliver> for Session {
    type Result = ();

    fn handle(&mut self, msg: Deliver, ctx: &mut Self::Context) {
        self.send_queue.release(send_queue::weight(&msg.frame));
        if let Some(revoked) = &msg.frame.revoked_token {
            let mine = self
                .device
                .as_ref()
                .is_some_and(|d| &d.token_hash == revoked);
            if mine {
                self.send_error(
                    ctx,
                    None,
                    ErrorCode::Auth,
                    "this device's token was revoked",
                );
                self.close(ctx, close_codes::TOKEN_REVOKED, "token revoked");
            }
            return;
        }
        self.accept_live(msg.frame, ctx);
    }
}

impl Session {
    /// A frame for this device's account arrived live: it is sent, held or dropped as the
    /// delivery cursor says.
    fn accept_live(&mut self, frame: Arc<RoutedFrame>, ctx: &mut ws::WebsocketContext<Self>) {
        let Some(cursor) = self.cursor.as_mut() else {
            self.early.push(frame);
            return;
        };
        match cursor.on_live(frame) {
            LiveStep::Send(frame) => self.send_routed(ctx, &frame),
            LiveStep::FillGap(range) => {
                metrics::incr(&self.state.metrics.gap_fills_total);
                self.start_replay(range, ReplayPurpose::GapFill, ctx);
            }
            LiveStep::Held | LiveStep::Duplicate => {}
        }
    }
}

impl Handler<Restarting> for Session {
    type Result = ();

    fn handle(&mut self, _msg: Restarting, ctx: &mut Self::Context) {
        let status = Status {
            state: Some(StatusState::Restarting),
            session: None,
        };
        self.send(ctx, ServerFrame::new(ServerBody::Status(status)));
        self.close(ctx, close_codes::SERVER_RESTARTING, "server restarting");
    }
}

impl StreamHandler<Result<ws::Message, ws::ProtocolError>> for Session {
    fn handle(&mut self, msg: Result<ws::Message, ws::ProtocolError>, ctx: &mut Self::Context) {
        self.last_heard = Instant::now();
        match msg {
            Ok(ws::Message::Text(text)) => self.on_text(&text, ctx),
            Ok(ws::Message::Ping(bytes)) => ctx.pong(&bytes),
            Ok(ws::Message::Pong(_)) => {}
            Ok(ws::Message::Binary(bytes)) => self.on_binary(bytes, ctx),
            Ok(ws::Message::Close(reason)) => {
                ctx.close(reason);
                ctx.stop();
            }
            Ok(ws::Message::Continuation(item)) => self.on_fragment(item, ctx),
            Ok(ws::Message::Nop) => {}
            Err(ws::ProtocolError::Overflow) => {
                // Over the codec's limit: the larger of the text limit and a media frame.
                let limit = self.state.limits.max_frame_bytes.max(MAX_MEDIA_FRAME_BYTES);
                self.refuse_oversize(ctx, limit);
            }
            Err(ws::ProtocolError::Io(err)) if is_invalid_utf8(&err) => {
                self.refuse_invalid_utf8(ctx)
            }
            Err(err) => {
                tracing::debug!(%err, session = self.id, "WebSocket protocol error");
                ctx.stop();
            }
        }
    }
}

impl Session {
    /// One frame of a fragmented message: the whole message is handled once its last frame
    /// arrives, as if it had come in one frame.
    fn on_fragment(&mut self, item: actix_http::ws::Item, ctx: &mut ws::WebsocketContext<Self>) {
        let limit = self.state.limits.max_frame_bytes.max(MAX_MEDIA_FRAME_BYTES);
        match self.fragments.push(item, limit) {
            fragments::Piece::Incomplete => {}
            fragments::Piece::Whole(fragments::Whole::Binary(bytes)) => self.on_binary(bytes, ctx),
            fragments::Piece::Whole(fragments::Whole::Text(bytes)) => {
                match std::str::from_utf8(&bytes) {
                    Ok(text) => self.on_text(text, ctx),
                    Err(_) => self.refuse_invalid_utf8(ctx),
                }
            }
            fragments::Piece::TooBig => self.refuse_oversize(ctx, limit),
            fragments::Piece::OutOfOrder => {
                tracing::debug!(session = self.id, "WebSocket continuation out of order");
                ctx.stop();
            }
        }
    }

    fn refuse_invalid_utf8(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        metrics::incr(&self.state.metrics.protocol_errors_total);
        let message = "text message is not valid UTF-8";
        self.send_error(ctx, None, ErrorCode::Unsupported, message);
        self.close(ctx, close_codes::INVALID_PAYLOAD, "invalid UTF-8");
    }
}

/// Whether the codec refused a text message for its bytes: actix reports invalid UTF-8
/// as an I/O error carrying the UTF-8 decoder's message.
fn is_invalid_utf8(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::Other
        && err
            .get_ref()
            .is_some_and(|inner| inner.to_string().contains("utf-8"))
}
