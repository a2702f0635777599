//! What a `GET /ws` must pass before it becomes a session, in this order: no body (400), a
//! valid WebSocket handshake (400, or 426 for another version), an allowed browser origin
//! (403), the client address's upgrade budget (429) and room under the node's connection
//! cap (503, so a load balancer tries another node). Each refusal is counted by reason.

use std::sync::atomic::Ordering;

use actix_http::ws::{verify_handshake, HandshakeError};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};

use super::reason::Reason;
use crate::client_ip::client_ip;
use crate::state::GatewayState;

/// Why the upgrade `req` is refused, if it is, as the response to send.
pub fn refusal(req: &HttpRequest, state: &GatewayState) -> Option<HttpResponse> {
    let metrics = &state.metrics;
    if has_body(req) {
        return Some(Reason::BodyOnUpgrade.respond(
            metrics,
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade carries no body",
        ));
    }
    if let Err(err) = verify_handshake(req.head()) {
        let reason = match err {
            HandshakeError::BadWebsocketKey => Reason::BadWebsocketKey,
            _ => Reason::BadHandshake,
        };
        reason.count(metrics);
        let mut response = HttpResponse::from(actix_http::Response::from(err));
        response
            .head_mut()
            .set_connection_type(actix_http::ConnectionType::Close);
        return Some(response);
    }
    let allowed = &state.limits.allowed_origins;
    if let Some(origin) = req.headers().get("origin").and_then(|o| o.to_str().ok()) {
        let origin = origin.trim_end_matches('/');
        if !allowed.is_empty() && !allowed.iter().any(|a| a == origin) {
            return Some(Reason::Origin.respond(
                metrics,
                StatusCode::FORBIDDEN,
                "origin not allowed",
            ));
        }
    }
    let ip = client_ip(req, state.limits.trust_forwarded_for);
    if ip.is_some_and(|ip| !state.upgrade_limiter.allow(ip)) {
        let mut response = Reason::UpgradeRate.respond(
            metrics,
            StatusCode::TOO_MANY_REQUESTS,
            "too many connection attempts from this address; retry later",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return Some(response);
    }
    let open = state.metrics.connections.load(Ordering::Relaxed);
    if open >= state.limits.max_connections {
        return Some(Reason::ConnectionCap.respond(
            metrics,
            StatusCode::SERVICE_UNAVAILABLE,
            "connection limit reached; try another node",
        ));
    }
    None
}

/// Whether `req` says it carries a body: a `Content-Length` above 0 (or one that is not a
/// number) or any `Transfer-Encoding`.
fn has_body(req: &HttpRequest) -> bool {
    let headers = req.headers();
    let declared_length = headers.get(header::CONTENT_LENGTH).map(|value| {
        value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            != Some(0)
    });
    declared_length.unwrap_or(false) || headers.contains_key(header::TRANSFER_ENCODING)
}
