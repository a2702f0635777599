//! WebSocket close codes the gateway uses, and what a client should do about each.
//!
//! 4000-4099 are final: reconnecting with the same input fails again, the app must change
//! something first (e.g. pair again). 4100-4199 ask the app to reconnect (with backoff)
//! and `sync`. docs/wire-protocol.md carries the same table.

/// The `hello` token is missing, unknown or revoked. Final: pair again.
pub const AUTH_FAILED: u16 = 4001;
/// No `hello` arrived within the hello timeout. Final for this connection attempt.
pub const HELLO_TIMEOUT: u16 = 4002;
/// The token this device paired with was revoked. Final: pair again with a new token.
pub const TOKEN_REVOKED: u16 = 4003;
/// The node is shutting down or restarting. Reconnect (to any node) and `sync`.
pub const SERVER_RESTARTING: u16 = 4100;
/// The connection stayed silent past the client timeout. Reconnect and `sync`.
pub const HEARTBEAT_TIMEOUT: u16 = 4101;
/// Live delivery found frames missing that the outbox no longer holds. Reconnect and
/// `sync`: the sync answer tells the app whether it must reload history.
pub const RESYNC_REQUIRED: u16 = 4102;
/// The node could not reach Redis to serve this connection. Reconnect and `sync`.
pub const BACKEND_UNAVAILABLE: u16 = 4103;
/// The device did not take frames fast enough for longer than the slow-consumer bound.
/// Reconnect and `sync`: nothing outboxed is lost.
pub const SLOW_CONSUMER: u16 = 4104;
/// Too many `hello` attempts from the client's address (`IRIS_HELLO_RATE`). Reconnect
/// with backoff; the address's budget refills over time.
pub const TOO_MANY_HELLOS: u16 = 4105;
/// A text message that is not valid UTF-8 (standard code): the sender must fix its frames.
pub const INVALID_PAYLOAD: u16 = 1007;
/// A WebSocket message exceeded the size limit (standard code).
pub const MESSAGE_TOO_BIG: u16 = 1009;
