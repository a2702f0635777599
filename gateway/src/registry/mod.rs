//! The registry actor: which sessions of this node belong to which account, the node's
//! presence in Redis for their devices, and the fan-out of delivered frames and of backend
//! notices (degraded, online, data lost).
//!
//! Presence is written when it changes: a device's hold when it pairs, its release when its
//! last session here closes (`presence_holds.rs` keeps the two in order). Besides, the node
//! announces itself live every few seconds, one command whatever the number of devices. A
//! failed announcement is retried with backoff rather than waiting for the next interval;
//! when Redis comes back, or the node's liveness may have lapsed, every hold is written
//! again before sessions are told, so every frame written after a session checks the
//! outbox head reaches it live.
//!
//! Sessions are held as `Recipient<Deliver>`, never as the session type, so this actor
//! knows nothing about WebSockets.
//!
//! Backpressure: every frame queued for a session is charged to its [`SendQueue`]. A
//! session at its queue limit gets no more frames queued; the registry keeps a bounded
//! [`Backlog`] for it instead and hands it over as [`Backpressure::CatchUp`] once the
//! queue has drained to half. A session that stays behind longer than the slow-consumer
//! bound gets [`Backpressure::TooSlow`] and is closed; its device reconnects and `sync`s.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use iris_shared::redis_conn::Pool;

use iris_shared::backoff::Backoff;
use iris_shared::clock::now_ms;
use iris_shared::delivery::RoutedFrame;
use iris_shared::presence::{self, gateways};

use crate::backlog::CatchUpFrames;
use crate::live_subscriptions::LiveSubscriptions;
use crate::metrics::Metrics;
use crate::presence_holds::{DeviceKey, PresenceHolds};
use crate::send_queue::{SendQueue, SendQueueLimits};

/// How often lagging sessions are checked for having caught up or being too slow.
const LAGGING_CHECK_INTERVAL: Duration = Duration::from_millis(50);

use crate::backend_notice::BackendNotice;

mod session_handle;
use session_handle::SessionHandle;

/// A frame for one session.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Deliver {
    /// The frame, shared by every session of the account on this node.
    pub frame: Arc<RoutedFrame>,
}

/// A paired session joins its account; answered once the node's presence for the device is
/// recorded in Redis and the node listens to the account's live channel, so no frame
/// written afterwards can miss this node.
#[derive(Message)]
#[rtype(result = "Result<(), redis::RedisError>")]
pub struct Register {
    /// The device's account.
    pub account: String,
    /// The device (its live session keeps it out of push delivery).
    pub device_id: String,
    /// The session's node-unique id.
    pub session_id: u64,
    /// Where its frames go.
    pub recipient: Recipient<Deliver>,
    /// Where the shutdown notice goes.
    pub drain: Recipient<Restarting>,
    /// Where backend notices go.
    pub backend: Recipient<BackendNotice>,
    /// Where catch-up and slow-consumer notices go.
    pub backpressure: Recipient<Backpressure>,
    /// The session's send queue, charged for every frame queued to it.
    pub queue: Arc<SendQueue>,
}

/// Backpressure notices to a session that fell behind.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub enum Backpressure {
    /// The session's queue has drained: the frames it is owed (their `bytes` are charged to
    /// its queue).
    CatchUp {
        /// What it missed.
        frames: CatchUpFrames,
        /// What the live frames weigh in the send queue.
        bytes: usize,
    },
    /// The session stayed behind past the slow-consumer bound: close it.
    TooSlow,
}

/// A session leaves (closed or failed).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Unregister {
    /// The device's account.
    pub account: String,
    /// The session's node-unique id.
    pub session_id: u64,
}

/// Sent to a session when the node shuts down: close with "server restarting".
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Restarting;

/// The node is shutting down: every session closes with "server restarting" so its
/// device reconnects to another node at once.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "usize")]
pub struct Drain;

/// A frame from this node's live channel, for all local sessions of its account.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Dispatch {
    /// The frame.
    pub frame: Arc<RoutedFrame>,
}

/// Sessions of this node by account.
pub struct Registry {
    /// This node's id, as written into presence.
    node_id: Arc<str>,
    /// Redis pool for presence writes.
    redis: Pool,
    /// Account → session id → recipients.
    accounts: HashMap<String, HashMap<u64, SessionHandle>>,
    /// The sessions with a backlog (account, session id): the lag check looks at these
    /// only, so holding many idle sessions costs it nothing.
    lagging: HashSet<(String, u64)>,
    /// Send queue limits of every session.
    limits: SendQueueLimits,
    /// The node's counters.
    metrics: Arc<Metrics>,
    /// The ids of this node's presence holds and the writes in flight.
    holds: PresenceHolds,
    /// The accounts whose live channels the node listens to.
    live: LiveSubscriptions,
    /// When the last announcement that succeeded was sent: if the next one goes out later
    /// than the liveness lasts, other nodes may have forgotten this node's holds.
    announced_at: Option<Instant>,
    /// Pacing of retries after a failed announcement or hold-all.
    retry_backoff: Backoff,
    /// A retry of a failed announcement is scheduled.
    announce_retry_pending: bool,
}

/// How close to its liveness's end an announcement may go out before this node counts as
/// possibly lapsed (clocks and round trips differ a little between nodes).
const LAPSE_MARGIN: Duration = Duration::from_secs(5);

impl Registry {
    /// A registry for node `node_id`.
    pub fn new(
        node_id: Arc<str>,
        redis: Pool,
        limits: SendQueueLimits,
        metrics: Arc<Metrics>,
        live: LiveSubscriptions,
    ) -> Self {
        Self {
            node_id,
            redis,
            accounts: HashMap::new(),
            lagging: HashSet::new(),
            holds: PresenceHolds::default(),
            live,
            announced_at: None,
            limits,
            metrics,
            retry_backoff: Backoff::default(),
            announce_retry_pending: false,
        }
    }

    /// Hands lagging sessions their backlog once they can take it, or closes them.
    fn check_lagging(&mut self, _ctx: &mut Context<Self>) {
        if self.lagging.is_empty() {
            return;
        }
        let now = Instant::now();
        let (accounts, limits, metrics) = (&mut self.accounts, self.limits, &self.metrics);
        self.lagging.retain(|(account, session_id)| {
            let Some(session) = accounts
                .get_mut(account)
                .and_then(|sessions| sessions.get_mut(session_id))
            else {
                return false;
            };
            session.check_lag(now, limits, metrics);
            session.backlog.is_some()
        });
    }

    /// Periodic announcement (skipped while a backoff retry is pending).
    fn announce_on_interval(&mut self, ctx: &mut Context<Self>) {
        if !self.announce_retry_pending {
            self.announce(ctx);
        }
    }

    /// Announces this node live. If the previous announcement that succeeded is older than
    /// the liveness lasts, writers may have counted the node dead and forgotten its holds:
    /// they are written again, and sessions catch up on what live delivery missed.
    fn announce(&mut self, ctx: &mut Context<Self>) {
        let (redis, node) = (self.redis.clone(), self.node_id.clone());
        let sent_at = Instant::now();
        let announcement = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            gateways::announce(&mut conn, &node, now_ms())
                .await
                .map_err(|err| err.to_string())
        };
        ctx.spawn(
            announcement
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(()) => {
                        let liveness = Duration::from_millis(gateways::LIVENESS_TTL_MS);
                        let lapsed = act.announced_at.is_some_and(|before| {
                            sent_at.duration_since(before) + LAPSE_MARGIN >= liveness
                        });
                        act.announced_at = Some(sent_at);
                        act.retry_backoff.reset();
                        act.announce_retry_pending = false;
                        if lapsed {
                            tracing::warn!(
                                "this node's liveness may have lapsed; holding its devices again"
                            );
                            act.hold_all(ctx, Some(BackendNotice::PresenceRestored));
                        }
                    }
                    Err(err) => {
                        tracing::warn!(%err, "announcing the node failed; retrying");
                        act.announce_retry_pending = true;
                        ctx.run_later(act.retry_backoff.next_delay(), Self::announce);
                    }
                }),
        );
    }

    /// Sends `notice` to every session.
    fn tell_sessions(&self, notice: BackendNotice) {
        for (account, sessions) in &self.accounts {
            if let BackendNotice::DataLost(scope) = &notice {
                if !scope.covers_account(account) {
                    continue;
                }
            }
            for session in sessions.values() {
                session.backend.do_send(notice.clone());
            }
        }
    }

    /// Writes this node's holds of every device it holds again (they may have lapsed or
    /// been lost with Redis's data); then tells every session `notice`, if given. A failure
    /// is retried after a backoff pause.
    fn hold_all(&mut self, ctx: &mut Context<Self>, notice: Option<BackendNotice>) {
        let (devices, hold_id) = self.holds.begin_hold_all(now_ms());
        let (redis, node) = (self.redis.clone(), self.node_id.clone());
        let written = devices.clone();
        let writing = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            presence::hold(&mut conn, &node, &written, hold_id, now_ms())
                .await
                .map_err(|err| err.to_string())
        };
        ctx.spawn(writing.into_actor(self).map(move |result, act, ctx| {
            for device in &devices {
                act.hold_ended(device, ctx);
            }
            if let Err(err) = result {
                tracing::warn!(%err, "writing presence failed; retrying");
                ctx.run_later(act.retry_backoff.next_delay(), |act, ctx| {
                    act.hold_all(ctx, None)
                });
            }
            // Sessions are told even if the write failed: the watch saw Redis answer,
            // and the retry follows shortly.
            if let Some(notice) = notice {
                act.tell_sessions(notice);
            }
        }));
    }

    /// A hold write of `device` ended: sends the release that waited for it, if any.
    fn hold_ended(&mut self, device: &DeviceKey, ctx: &mut Context<Self>) {
        if let Some(hold_id) = self.holds.hold_ended(device) {
            self.send_release(device.clone(), hold_id, ctx);
        }
    }

    /// Removes the hold `hold_id` of `device` (unless a newer one replaced it).
    fn send_release(&mut self, device: DeviceKey, hold_id: u64, ctx: &mut Context<Self>) {
        let (redis, node) = (self.redis.clone(), self.node_id.clone());
        ctx.spawn(
            async move {
                let Ok(mut conn) = redis.get().await else {
                    return;
                };
                let (account, device) = &device;
                if let Err(err) =
                    presence::release(&mut conn, &node, account, device, hold_id).await
                {
                    tracing::warn!(%err, "presence release failed");
                }
            }
            .into_actor(self),
        );
    }
}

impl Actor for Registry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.announce(ctx);
        ctx.run_interval(
            Duration::from_millis(gateways::ANNOUNCE_INTERVAL_MS),
            Self::announce_on_interval,
        );
        ctx.run_interval(LAGGING_CHECK_INTERVAL, Self::check_lagging);
    }
}

impl Handler<Register> for Registry {
    type Result = ResponseActFuture<Self, Result<(), redis::RedisError>>;

    fn handle(&mut self, msg: Register, _ctx: &mut Self::Context) -> Self::Result {
        let sessions = self.accounts.entry(msg.account.clone()).or_default();
        let listening = (sessions.is_empty()).then(|| self.live.join(&msg.account));
        sessions.insert(
            msg.session_id,
            SessionHandle {
                device_id: msg.device_id.clone(),
                deliver: msg.recipient,
                drain: msg.drain,
                backpressure: msg.backpressure,
                queue: msg.queue,
                backlog: None,
                closing: false,
                backend: msg.backend,
            },
        );
        let device: DeviceKey = (msg.account, msg.device_id);
        let hold_id = self.holds.begin_hold(device.clone(), now_ms());
        let (redis, node) = (self.redis.clone(), self.node_id.clone());
        let held = [device.clone()];
        let writing = async move {
            let holding = async {
                let mut conn = redis.get().await.map_err(pool_error)?;
                presence::hold(&mut conn, &node, &held, hold_id, now_ms()).await
            };
            let listening = async {
                if let Some(listening) = listening {
                    listening.await;
                }
            };
            futures_util::join!(holding, listening).0
        };
        Box::pin(writing.into_actor(self).map(move |result, act, ctx| {
            act.hold_ended(&device, ctx);
            result
        }))
    }
}

fn pool_error(err: iris_shared::redis_conn::PoolError) -> redis::RedisError {
    match err {
        iris_shared::redis_conn::PoolError::Backend(err) => err,
        other => redis::RedisError::from(std::io::Error::other(other.to_string())),
    }
}

impl Handler<Unregister> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Unregister, ctx: &mut Self::Context) {
        let Some(sessions) = self.accounts.get_mut(&msg.account) else {
            return;
        };
        let Some(left) = sessions.remove(&msg.session_id) else {
            return;
        };
        let device_still_here = sessions.values().any(|s| s.device_id == left.device_id);
        if sessions.is_empty() {
            self.accounts.remove(&msg.account);
            self.live.leave(&msg.account);
        }
        if device_still_here {
            return;
        }
        let device: DeviceKey = (msg.account, left.device_id);
        if let Some(hold_id) = self.holds.release(device.clone()) {
            self.send_release(device, hold_id, ctx);
        }
    }
}

impl Handler<Dispatch> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Dispatch, _ctx: &mut Self::Context) {
        let Some(sessions) = self.accounts.get_mut(&msg.frame.account) else {
            return;
        };
        let span = iris_shared::traced_span!(
            "iris.deliver",
            otel.kind = "consumer",
            messaging.system = "redis",
            messaging.operation.type = "process",
            frame = msg.frame.frame_type(),
            seq = msg.frame.seq,
            sessions = sessions.len()
        );
        iris_shared::telemetry::propagation::continue_trace(
            &span,
            msg.frame.trace_parent.as_deref(),
        );
        let _entered = span.enter();
        for (&session_id, session) in sessions.iter_mut() {
            session.offer(&msg.frame, self.limits, &self.metrics);
            if session.backlog.is_some() {
                self.lagging.insert((msg.frame.account.clone(), session_id));
            }
        }
    }
}

impl Handler<Drain> for Registry {
    type Result = usize;

    fn handle(&mut self, _msg: Drain, _ctx: &mut Self::Context) -> usize {
        let sessions = self.accounts.values().flat_map(HashMap::values);
        sessions
            .map(|session| session.drain.do_send(Restarting))
            .count()
    }
}

impl Handler<BackendNotice> for Registry {
    type Result = ();

    fn handle(&mut self, notice: BackendNotice, ctx: &mut Self::Context) {
        match notice {
            BackendNotice::Degraded
            | BackendNotice::PresenceRestored
            | BackendNotice::LiveResumed => self.tell_sessions(notice),
            // Presence may have been forgotten (or lost with the data): hold it again first.
            BackendNotice::Online | BackendNotice::DataLost(_) => self.hold_all(ctx, Some(notice)),
        }
    }
}
