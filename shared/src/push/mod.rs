//! Push notifications: the Redis side every node agrees on.
//!
//! A device that is not connected is woken by a push notification (FCM or ntfy) when its
//! account gets something worth seeing. The pieces here are what gateways and workers share;
//! the sending itself lives in the worker's push dispatcher.
//!
//! - [`target`]: where each device wants to be pushed (`iris:{a:A}:push`, device → JSON),
//!   written by gateways from `hello` and `fcm.register`.
//! - A device with a session on a live gateway node is never pushed: see
//!   [`crate::presence::online_devices`].
//! - [`for_frame`]: which written frames push, with what title and body.
//! - [`job`]: the push jobs stream `iris:push:jobs`, appended by workers after outboxing a
//!   frame worth a notification and read by the dispatchers with group [`PUSH_GROUP`]
//!   ([`job_group`]: reading, claiming, acknowledging).
//! - [`sent`]: the per-(device, seq) marker that makes a job handled twice push once.
//! - [`window`]: the per-device rate-limit window, held by the worker that pushed last, so
//!   the limit holds across workers.
//!
//! Note: [`PushKind`] is what a *job* is about (message, picker, notification); what the
//! server pushes *with* (`hello.ack.server_caps.push`) is
//! [`crate::protocol::enums::PushKind`].

pub mod for_frame;
pub mod job;
pub mod job_group;
pub mod sent;
pub mod target;
pub mod window;

pub use for_frame::push_for;
pub use job::{enqueue, enqueue_command, PushJob, PushKind, PUSH_GROUP, PUSH_JOBS_MAX_LEN};
pub use sent::{claim_send, PUSHED_TTL_SECS};
pub use target::{remove_target, set_target, targets, PushTarget};
pub use window::claim_window;
