//! Pairing: `hello` → token check → registration with the node → outbox head →
//! `hello.ack {server_caps, sync_cursor, channels}`.

use actix::prelude::*;
use actix_web_actors::ws;

use iris_shared::agent_capabilities::Announced;
use iris_shared::channels;
use iris_shared::clock::now_ms;
use iris_shared::devices::{self, DeviceRecord};
use iris_shared::outbox;
use iris_shared::protocol::{
    AppBody, Channel, ErrorCode, Hello, HelloAck, ServerBody, ServerCaps, ServerFrame,
};
use iris_shared::push::{self, PushTarget};
use iris_shared::redis_conn::Pool;
use iris_shared::tokens;

use super::{Device, Phase, Session};
use crate::close_codes;
use crate::cursor::DeliveryCursor;
use crate::metrics;
use crate::registry::Register;

/// What pairing learned about the device.
struct Paired {
    account: String,
    token_hash: String,
    head: u64,
    channels: Vec<Channel>,
    announced: Announced,
}

/// Why pairing failed.
enum PairingError {
    BadToken,
    Backend(String),
}

impl From<redis::RedisError> for PairingError {
    fn from(err: redis::RedisError) -> Self {
        Self::Backend(err.to_string())
    }
}

impl From<iris_shared::redis_conn::PoolError> for PairingError {
    fn from(err: iris_shared::redis_conn::PoolError) -> Self {
        Self::Backend(err.to_string())
    }
}

impl From<tokens::TokenError> for PairingError {
    fn from(err: tokens::TokenError) -> Self {
        Self::Backend(err.to_string())
    }
}

/// Device ids name a device in keys and frames; `@` starts the server API's own ids.
fn is_valid_device_id(device_id: &str) -> bool {
    (1..=128).contains(&device_id.len())
        && !device_id.starts_with('@')
        && !device_id.chars().any(char::is_control)
}

/// What this server can do: the gateway's own features, and what the workers announced
/// about their upstream agent and push.
fn server_caps(announced: &Announced) -> ServerCaps {
    ServerCaps {
        streaming: Some(true),
        reasoning: Some(announced.agent.reasoning),
        tools: Some(announced.agent.tools),
        media: Some(true),
        search: Some(true),
        push: Some(announced.push),
        pickers: Some(true),
    }
}

/// Records the device and reads what `hello.ack` needs.
async fn load_account(
    redis: &Pool,
    account: &str,
    device_id: &str,
    device_name: &str,
    node: &str,
    token_hash: &str,
) -> Result<(u64, Vec<Channel>, Announced), PairingError> {
    let mut conn = redis.get().await?;
    // The token's id lets a revocation find the device's push targets.
    let device = DeviceRecord::paired(device_name, now_ms(), node, tokens::id_of(token_hash));
    let announced =
        devices::record_and_read_announced(&mut conn, account, device_id, &device).await?;
    let channels = channels::list(&mut conn, account).await?;
    let window = outbox::window(&mut conn, account, now_ms()).await?;
    Ok((window.head, channels, announced))
}

impl Session {
    /// Starts pairing for a `hello` request.
    pub(super) fn pair(
        &mut self,
        id: Option<u64>,
        hello: Hello,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        if self.state.is_degraded() {
            return self.refuse_backend_unavailable(ctx, id);
        }
        // Every attempt counts, before the token is even looked at: failed ones too.
        if let Some(ip) = self.client_ip {
            if !self.state.hello_limiter.allow(ip) {
                metrics::incr(&self.state.metrics.rate_limited_total);
                let message = "too many hello attempts from this address; retry later";
                self.send_error(ctx, id, ErrorCode::RateLimited, message);
                self.close(ctx, close_codes::TOO_MANY_HELLOS, "too many hello attempts");
                return;
            }
        }
        let Some(token) = hello.token.filter(|t| !t.is_empty()) else {
            self.reject(ctx, id, "hello needs a token");
            return;
        };
        self.phase = Phase::Pairing;
        if hello
            .device_id
            .as_deref()
            .is_some_and(|d| !is_valid_device_id(d))
        {
            self.reject(
                ctx,
                id,
                "device_id must be 1-128 characters and not start with @",
            );
            return;
        }
        let device_id = hello
            .device_id
            .unwrap_or_else(|| format!("conn-{}-{}", self.state.node_id, self.id));
        let device_name = hello.device_name.unwrap_or_default();
        let resume = hello.resume == Some(true);
        let push_target = PushTarget {
            fcm_token: hello.fcm_token,
            ntfy_topic: hello.ntfy_topic,
        };
        let redis = self.state.redis.clone();
        let registry = self.state.registry.clone();
        let recipient = ctx.address().recipient();
        let drain = ctx.address().recipient();
        let backpressure = ctx.address().recipient();
        let queue = self.send_queue.clone();
        let backend = ctx.address().recipient();
        let session_id = self.id;
        let device_for_load = device_id.clone();
        let node = self.state.node_id.to_string();
        let pairing = async move {
            let mut conn = redis.get().await?;
            let account = tokens::verify(&mut conn, &token)
                .await?
                .ok_or(PairingError::BadToken)?;
            let token_hash = tokens::digest(&token);
            drop(conn);
            registry
                .send(Register {
                    account: account.clone(),
                    device_id: device_for_load.clone(),
                    session_id,
                    recipient,
                    drain,
                    backpressure,
                    queue,
                    backend,
                })
                .await
                .map_err(|err| PairingError::Backend(err.to_string()))??;
            let (head, channels, announced) = load_account(
                &redis,
                &account,
                &device_for_load,
                &device_name,
                &node,
                &token_hash,
            )
            .await?;
            if !push_target.is_empty() {
                let mut conn = redis.get().await?;
                push::set_target(&mut conn, &account, &device_for_load, &push_target).await?;
            }
            Ok::<_, PairingError>(Paired {
                account,
                token_hash,
                head,
                channels,
                announced,
            })
        };
        ctx.wait(
            pairing
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(paired) => act.on_paired(id, device_id, resume, paired, ctx),
                    Err(PairingError::BadToken) => act.reject(ctx, id, "invalid or revoked token"),
                    Err(PairingError::Backend(err)) => {
                        tracing::warn!(%err, "pairing failed on Redis");
                        act.refuse_backend_unavailable(ctx, id);
                    }
                }),
        );
    }

    /// Redis is unreachable: `error {internal, "backend unavailable"}`, close 4103.
    fn refuse_backend_unavailable(
        &mut self,
        ctx: &mut ws::WebsocketContext<Self>,
        id: Option<u64>,
    ) {
        self.send_error(ctx, id, ErrorCode::Internal, "backend unavailable");
        self.close(ctx, close_codes::BACKEND_UNAVAILABLE, "backend unavailable");
    }

    fn reject(&mut self, ctx: &mut ws::WebsocketContext<Self>, id: Option<u64>, why: &str) {
        metrics::incr(&self.state.metrics.auth_failures_total);
        self.send_error(ctx, id, ErrorCode::Auth, why);
        self.close(ctx, close_codes::AUTH_FAILED, "auth failed");
    }

    /// Answers `hello.ack` and starts delivery. A device resuming from a cursor (`resume`
    /// in `hello`, or a `sync` pipelined behind it) gets outboxed frames after its replay,
    /// in seq order; any other device gets them live at once, as they happen.
    fn on_paired(
        &mut self,
        id: Option<u64>,
        device_id: String,
        resume: bool,
        paired: Paired,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let chats = paired
            .channels
            .iter()
            .filter_map(|channel| Some((channel.chat_id.clone()?, channel.parent_chat_id.clone())))
            .collect();
        self.device = Some(Device {
            account: paired.account,
            device_id,
            token_hash: paired.token_hash,
            chats,
        });
        self.phase = Phase::Ready;
        metrics::shift(&self.state.metrics.paired_devices, 1);
        let ack = HelloAck {
            server_caps: Some(server_caps(&paired.announced)),
            sync_cursor: Some(paired.head),
            channels: Some(paired.channels),
        };
        self.send(ctx, ServerFrame::new(ServerBody::HelloAck(ack)).with_id(id));

        let mut cursor = DeliveryCursor::new(paired.head);
        for frame in self.early.drain(..) {
            cursor.on_live(frame);
        }
        if let Some(through) = self.skipped_early.take() {
            cursor.on_skipped(through);
        }
        self.cursor = Some(cursor);
        let sync_follows = matches!(
            self.deferred.front().map(|frame| &frame.body),
            Some(AppBody::Sync(_))
        );
        if resume || sync_follows {
            // Bounded: a device that announced a sync but never sends one still gets its
            // frames.
            ctx.run_later(self.state.limits.sync_grace, |act, ctx| {
                act.end_sync_grace(ctx)
            });
        } else {
            self.end_sync_grace(ctx);
        }
        self.drain_deferred(ctx);
    }
}
