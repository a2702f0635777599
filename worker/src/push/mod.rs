//! Push delivery: wakes a device that is not connected when its account gets a message, a
//! picker or a notification (see docs/push.md).
//!
//! # Layout
//! - `settings`: which services (ntfy, FCM) are configured, and the announced push kind.
//! - `announce`: field `push` of `iris:agent`, for `hello.ack.server_caps.push`.
//! - `dispatcher`: the read of `iris:push:jobs` (group `pushers`), claims, acknowledgement.
//! - `fanout`: one job → the account's offline devices with a target → one push each.
//! - `throttle`: at most one push per device per interval, pushes inside it merged.
//! - `channels`: the services, and one device's delivery through each of its targets.
//! - `retry`: which failures are retried, and the backoff.
//! - `retry_after`: the pause a `429` or `503` asks for (`Retry-After`).
//! - `ntfy`, `fcm`: one attempt at sending through each service.

mod announce;
mod channels;
mod dispatcher;
mod fanout;
mod fcm;
mod ntfy;
mod retry;
mod retry_after;
mod settings;
mod throttle;

#[cfg(test)]
mod tests;

pub use announce::announce;
pub use dispatcher::Dispatcher;
pub use settings::{announced_kind, PushSettings};
