//! Liveness of gateway nodes: `iris:gateways`, a sorted set of node id → the time (ms) its
//! announcement expires. A gateway announces itself every [`ANNOUNCE_INTERVAL_MS`] (and with
//! every hold it writes); one that stops, killed or cut off from Redis, stops counting as
//! live [`LIVENESS_TTL_MS`] after its last announcement, and its presence holds with it.
//!
//! [`LiveGateways`] is a writer's view of the set. It reads it only when a node it is asked
//! about is unknown or past its expiry, so delivering to live nodes costs no command in the
//! steady state, and a node that lapses is looked up again before it is written off.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use redis::aio::ConnectionLike;
use redis::{Pipeline, RedisResult};

use crate::keys;

/// How long a gateway counts as live after announcing itself.
pub const LIVENESS_TTL_MS: u64 = 30_000;
/// How often a gateway announces itself (well inside [`LIVENESS_TTL_MS`]).
pub const ANNOUNCE_INTERVAL_MS: u64 = 10_000;

/// Adds to `pipe` the announcement that `node` is live until [`LIVENESS_TTL_MS`] from now.
pub fn add_announce(pipe: &mut Pipeline, node: &str, now_ms: u64) {
    pipe.cmd("ZADD")
        .arg(keys::gateways())
        .arg(now_ms + LIVENESS_TTL_MS)
        .arg(node)
        .ignore();
}

/// Announces `node` live and drops the nodes whose announcement lapsed.
pub async fn announce<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    now_ms: u64,
) -> RedisResult<()> {
    let mut pipe = redis::pipe();
    add_announce(&mut pipe, node, now_ms);
    pipe.cmd("ZREMRANGEBYSCORE")
        .arg(keys::gateways())
        .arg("-inf")
        .arg(now_ms)
        .ignore();
    pipe.query_async(conn).await
}

/// Removes `node` from the live set (on orderly shutdown, once its sessions are gone).
pub async fn leave<C: ConnectionLike + Send>(conn: &mut C, node: &str) -> RedisResult<()> {
    redis::cmd("ZREM")
        .arg(keys::gateways())
        .arg(node)
        .query_async(conn)
        .await
}

/// Nodes sorted by [`LiveGateways::split`].
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Nodes live now.
    pub live: Vec<String>,
    /// Nodes whose announcement lapsed (or that never announced themselves).
    pub dead: Vec<String>,
}

/// A process's view of the live gateway nodes, shared by its connections to one Redis.
#[derive(Debug, Default)]
pub struct LiveGateways {
    view: Mutex<View>,
}

#[derive(Debug, Default)]
struct View {
    /// Node → expiry (ms) of its announcement, as last read.
    expiries: HashMap<String, u64>,
    /// When the set was last read.
    read_at: Option<Instant>,
}

impl View {
    fn is_live(&self, node: &str, now_ms: u64) -> bool {
        self.expiries
            .get(node)
            .is_some_and(|&expiry| expiry > now_ms)
    }
}

impl LiveGateways {
    /// Sorts `nodes` into live and dead at `now_ms`. The set is read again first when one of
    /// them is not live in the last reading and that reading began before this call: a node
    /// that announced itself since (it just started, or renewed after its cached expiry)
    /// is then seen.
    pub async fn split<C: ConnectionLike + Send>(
        &self,
        conn: &mut C,
        nodes: Vec<String>,
        now_ms: u64,
    ) -> RedisResult<Split> {
        let asked_at = Instant::now();
        let stale = {
            let view = self.view.lock().expect("the view is never poisoned");
            let all_live = nodes.iter().all(|node| view.is_live(node, now_ms));
            !all_live && view.read_at.is_none_or(|read_at| read_at < asked_at)
        };
        if stale {
            let read_at = Instant::now();
            let expiries: Vec<(String, u64)> = redis::cmd("ZRANGEBYSCORE")
                .arg(keys::gateways())
                .arg(format!("({now_ms}"))
                .arg("+inf")
                .arg("WITHSCORES")
                .query_async(conn)
                .await?;
            let mut view = self.view.lock().expect("the view is never poisoned");
            if view.read_at.is_none_or(|earlier| earlier < read_at) {
                view.expiries = expiries.into_iter().collect();
                view.read_at = Some(read_at);
            }
        }
        let view = self.view.lock().expect("the view is never poisoned");
        let (live, dead) = nodes
            .into_iter()
            .partition(|node| view.is_live(node, now_ms));
        Ok(Split { live, dead })
    }
}
