//! The Lua scripts for every multi-key atomic step, loaded from the files beside this
//! module (each file's header states its keys, arguments, atomicity and reply).
//!
//! `redis::Script` sends `EVALSHA` and falls back to `EVAL` once after a Redis restart,
//! so callers never manage script loading.

use std::sync::LazyLock;

use redis::Script;

/// Appends a frame to an account's outbox and history, fenced and de-duplicated.
pub static OUTBOX_APPEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/outbox_append.lua")));
/// Reads (creating if absent) an outbox's head and oldest retained seq.
pub static OUTBOX_WINDOW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/outbox_window.lua")));
/// Takes or extends a partition lease, issuing a fencing token.
pub static LEASE_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/lease_acquire.lua")));
/// Extends a held partition lease.
pub static LEASE_RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/lease_renew.lua")));
/// Gives a held partition lease up.
pub static LEASE_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/lease_release.lua")));
/// Raises a chat's fence to a new owner's token.
pub static FENCE_CLAIM: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/fence_claim.lua")));
