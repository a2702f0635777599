//! Why the gateway refused an HTTP request or connection: one label of
//! `iris_gateway_http_refused_total` per reason, and the status a client sees.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;

use crate::metrics::Metrics;

/// One kind of refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Header fields over `IRIS_MAX_HEADER_BYTES` (431).
    HeaderTooLarge,
    /// A path with a dot segment, backslash, encoded separator or empty segment (404).
    PathTraversal,
    /// A `GET /ws` with a body (`Content-Length` above 0 or `Transfer-Encoding`) (400).
    BodyOnUpgrade,
    /// A `Sec-WebSocket-Key` missing or not the base64 of 16 bytes (400).
    BadWebsocketKey,
    /// Another broken WebSocket handshake: no `Upgrade`/`Connection` upgrade, no or another
    /// version (400, 426).
    BadHandshake,
    /// A browser `Origin` outside `IRIS_ALLOWED_ORIGINS` (403).
    Origin,
    /// Upgrades from one client address over `IRIS_UPGRADE_RATE`/`IRIS_UPGRADE_BURST` (429).
    UpgradeRate,
    /// The node holds `IRIS_MAX_CONNECTIONS` connections (503).
    ConnectionCap,
    /// A connection still sending its first request head after
    /// `IRIS_REQUEST_HEAD_TIMEOUT_MS` (actix-http answers 408 and closes it).
    RequestHeadTimeout,
    /// A connection closed sooner without a request reaching the gateway: a head actix-http
    /// refused itself (431 over 128 KiB or 96 fields, 400 malformed) or a client that left.
    ClosedBeforeRequest,
}

impl Reason {
    /// The `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            Self::HeaderTooLarge => "header_too_large",
            Self::PathTraversal => "path_traversal",
            Self::BodyOnUpgrade => "body_on_upgrade",
            Self::BadWebsocketKey => "bad_websocket_key",
            Self::BadHandshake => "bad_handshake",
            Self::Origin => "origin",
            Self::UpgradeRate => "upgrade_rate",
            Self::ConnectionCap => "connection_cap",
            Self::RequestHeadTimeout => "request_head_timeout",
            Self::ClosedBeforeRequest => "closed_before_request",
        }
    }

    /// Counts one refusal.
    pub fn count(self, metrics: &Metrics) {
        metrics.http_refused_total.incr(self.label());
    }

    /// Counts one refusal and answers it with `status` and a one-line `explanation`.
    pub fn respond(self, metrics: &Metrics, status: StatusCode, explanation: &str) -> HttpResponse {
        self.count(metrics);
        // Closed after the answer: nothing more of a refused request (an unread body, the
        // rest of a header flood) is read as another request.
        HttpResponse::build(status)
            .force_close()
            .content_type("text/plain")
            .body(format!("{explanation}\n"))
    }
}
