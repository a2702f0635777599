//! The Lua scripts for every multi-key atomic step, loaded from the files beside this
//! module (each file's header states its keys, arguments, atomicity and reply). A part two
//! scripts share (`search_add.lua`) is sent in front of each of them.
//!
//! `redis::Script` sends `EVALSHA` and falls back to `EVAL` once after a Redis restart,
//! so callers never manage script loading.

use std::sync::LazyLock;

use redis::Script;

/// Appends a frame to an account's outbox and history, fenced and de-duplicated.
pub static OUTBOX_APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("scripts/search_add.lua"),
        include_str!("scripts/outbox_append.lua")
    ))
});
/// Reads (creating if absent) an outbox's head and oldest retained seq.
pub static OUTBOX_WINDOW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/outbox_window.lua")));
/// Takes or extends a partition lease, issuing a fencing token.
pub static LEASE_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/lease_acquire.lua")));
/// Removes a device's presence hold only if no newer hold replaced it.
pub static PRESENCE_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/presence_release.lua")));
/// Forgets the presence holds of gateway nodes that stopped announcing themselves.
/// (Sent as `EVAL` from pipelines: it is rare, and needs no script loaded.)
pub const PRESENCE_FORGET_SOURCE: &str = include_str!("scripts/presence_forget.lua");
/// Gives a held partition lease up.
pub static LEASE_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/lease_release.lua")));
/// Raises a chat's fence to a new owner's token.
pub static FENCE_CLAIM: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/fence_claim.lua")));
/// Numbers a created channel once per creating request.
pub static CHANNEL_CLAIM: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/channel_claim.lua")));
/// Moves a chat's read marker forward, never back.
pub static READ_MARK: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/read_mark.lua")));
/// Adds one message to an account's search index, once.
pub static SEARCH_INDEX: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("scripts/search_add.lua"),
        include_str!("scripts/search_index.lua")
    ))
});
/// Finds an account's newest messages containing every query word, with bounded work.
pub static SEARCH_QUERY: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/search_query.lua")));
/// Removes a batch of one chat's messages from an account's search index.
pub static SEARCH_REMOVE_CHAT: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/search_remove_chat.lua")));
