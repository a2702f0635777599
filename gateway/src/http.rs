//! HTTP routes: `GET /ws` (the protocol), `GET /healthz`, `GET /readyz`, `GET /metrics`, the
//! server API and the web client (`GET /`, `GET /app/{file}`), and which of them each
//! listener serves.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use actix_web_actors::ws;

use iris_shared::clock::now_ms;
use iris_shared::media::frame::MAX_MEDIA_FRAME_BYTES;
use iris_shared::redis_conn;

use crate::client_ip::client_ip;
use crate::http_guard::refusal;
use crate::session::Session;
use crate::state::GatewayState;

/// Longest `/readyz` waits for Redis to answer PING.
const READY_PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Source of node-unique session ids.
static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

/// Registers every route on an app: the one listener of a node without an internal one.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.configure(public_routes).configure(operator_routes);
}

/// The routes of the public listener when an internal one takes the operator's routes: the
/// protocol, the web client and the probes. Anything else is a 404.
pub fn public_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/ws", web::get().to(websocket))
        .configure(probe_routes)
        .configure(crate::web::routes);
}

/// The routes of the internal listener: the operator's routes and the probes.
pub fn internal_routes(cfg: &mut web::ServiceConfig) {
    cfg.configure(probe_routes).configure(operator_routes);
}

/// `/healthz` and `/readyz`, served on every listener.
fn probe_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz));
}

/// `/metrics` and the server API: for operators and the systems they run, not devices.
fn operator_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics))
        .configure(crate::api::routes);
}

async fn websocket(
    req: HttpRequest,
    stream: web::Payload,
    state: web::Data<GatewayState>,
) -> actix_web::Result<HttpResponse> {
    if let Some(refusal) = refusal(&req, &state) {
        return Ok(refusal);
    }
    let id = NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed);
    let ip = client_ip(&req, state.limits.trust_forwarded_for);
    // The codec must take a full media chunk plus its header; the session itself holds
    // text messages to the (smaller) text limit.
    let max_frame = state.limits.max_frame_bytes.max(MAX_MEDIA_FRAME_BYTES);
    ws::WsResponseBuilder::new(
        Session::new(id, state.clone().into_inner(), ip),
        &req,
        stream,
    )
    .frame_size(max_frame)
    .start()
}

/// Tunes each accepted TCP connection: data the peer leaves unacknowledged for
/// `unacked_limit` (a device that stopped reading, or vanished) makes the kernel drop the
/// connection. A session whose socket is full cannot run its own timers, so this is what
/// bounds how long such a connection holds its buffers.
pub fn tune_connection(connection: &dyn Any, unacked_limit: Duration) {
    let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    let socket = socket2::SockRef::from(stream);
    if let Err(err) = socket.set_tcp_user_timeout(Some(unacked_limit)) {
        tracing::debug!(%err, "cannot set TCP_USER_TIMEOUT");
    }
}

/// Alive: the process answers.
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("ok\n")
}

/// Ready: Redis answers, the delivery loop is reading, and the node is not degraded.
async fn readyz(state: web::Data<GatewayState>) -> HttpResponse {
    if state.draining.load(std::sync::atomic::Ordering::Relaxed) {
        return HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body("draining: the node is shutting down\n");
    }
    let ping = async {
        let mut conn = state.redis.get().await.ok()?;
        redis_conn::ping(&mut conn).await.ok()
    };
    // A Redis that stops answering must fail the probe, not hang it.
    let redis_ok = tokio::time::timeout(READY_PING_TIMEOUT, ping)
        .await
        .ok()
        .flatten()
        .is_some();
    let delivery_ok = state.delivery_alive(now_ms());
    let degraded = state.is_degraded();
    let body = format!(
        "redis: {}\ndelivery loop: {}\nbackend: {}\n",
        if redis_ok { "ok" } else { "unreachable" },
        if delivery_ok { "ok" } else { "stalled" },
        if degraded { "degraded" } else { "online" }
    );
    if redis_ok && delivery_ok && !degraded {
        HttpResponse::Ok().content_type("text/plain").body(body)
    } else {
        HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body(body)
    }
}

async fn metrics(state: web::Data<GatewayState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(state.metrics.render())
}
