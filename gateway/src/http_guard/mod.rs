//! The HTTP side of hostile input: every request and connection the gateway refuses before
//! a WebSocket exists, each with its status and a reason counted in
//! `iris_gateway_http_refused_total{reason}` (the table is in docs/reliability.md, "Before
//! the WebSocket exists").
//!
//! - `screen`: the middleware every request passes first: oversized header blocks (431) and
//!   paths that try to leave the web client's files (404).
//! - `upgrade`: what a `GET /ws` must pass before it becomes a session: a body-less, valid
//!   WebSocket handshake (400), an allowed origin (403), the per-address upgrade rate (429)
//!   and the node's connection cap (503).
//! - `upgrade_limit`: the per-address upgrade budgets.
//! - `connection_watch`: connections that closed without one request reaching the app (a
//!   slow or oversized request head actix-http answered itself, or a client that left).
//! - `path`: which request paths count as traversal attempts.
//! - `reason`: the refusal reasons, their statuses and metric labels.

mod connection_watch;
mod path;
mod reason;
mod screen;
mod upgrade;
mod upgrade_limit;

pub use connection_watch::ConnectionWatch;
pub use screen::screen;
pub use upgrade::refusal;
pub use upgrade_limit::UpgradeLimiter;
