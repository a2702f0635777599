//! Presence: which devices of an account have a live session, and on which gateway node.
//!
//! `iris:{a:A}:presence` is a sorted set with one member `<node>\n<device>` per device that
//! has a session on a gateway node, scored with the hold's id (milliseconds, increasing per
//! node). It is written only when something changes: a gateway adds a member when a device
//! pairs ([`hold`]) and removes it when the device's last session on the node closes
//! ([`release`]). Nothing is renewed while devices sit idle, so holding devices costs Redis
//! nothing beyond each node's own announcement.
//!
//! A node that dies cannot remove its members, so readers go by the node's liveness
//! ([`gateways`]): every gateway announces itself every [`gateways::ANNOUNCE_INTERVAL_MS`]
//! until [`gateways::LIVENESS_TTL_MS`] ahead, and a node whose announcement lapsed stops
//! counting at once. Writers deliver live frames only to live nodes and forget the members
//! of dead ones ([`add_forget_dead`]); the pusher treats a device as online only on a live
//! node ([`online_devices`]).

pub mod gateways;

use std::collections::HashSet;

use redis::aio::ConnectionLike;
use redis::{Pipeline, RedisResult};

use crate::keys::AccountKeys;
use gateways::LiveGateways;

/// Most holds written per pipeline by [`hold`] (bounds one request's size).
const HOLD_BATCH: usize = 1_000;

/// How much older than the writer's clock a dead node's hold must be to be forgotten: a
/// node that restarted under the same id since holds again with newer ids, which stay (as
/// long as the nodes' clocks agree within this margin).
pub const FORGET_MARGIN_MS: u64 = 10_000;

/// The presence member of `device` on `node`.
pub fn member(node: &str, device: &str) -> String {
    format!("{node}\n{device}")
}

/// The node of a presence member (a member of the earlier layout is a plain node id).
pub fn node_of(member: &str) -> &str {
    member.split_once('\n').map_or(member, |(node, _)| node)
}

/// Whether `node` can name a gateway node in presence (it ends at the first newline).
pub fn is_valid_node_id(node: &str) -> bool {
    !node.is_empty() && !node.contains(['\n', '\r'])
}

/// Records that `node` holds a session of each `(account, device)` of `holds`, all with
/// the hold id `hold_id` (higher than any id the node wrote for them before), after
/// announcing the node alive: a writer that reads the holds then also finds the node live.
pub async fn hold<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    holds: &[(String, String)],
    hold_id: u64,
    now_ms: u64,
) -> RedisResult<()> {
    let mut batches = holds.chunks(HOLD_BATCH);
    let mut pipe = redis::pipe();
    gateways::add_announce(&mut pipe, node, now_ms);
    add_holds(&mut pipe, node, batches.next().unwrap_or_default(), hold_id);
    pipe.query_async::<()>(conn).await?;
    for batch in batches {
        let mut pipe = redis::pipe();
        add_holds(&mut pipe, node, batch, hold_id);
        pipe.query_async::<()>(conn).await?;
    }
    Ok(())
}

fn add_holds(pipe: &mut Pipeline, node: &str, holds: &[(String, String)], hold_id: u64) {
    for (account, device) in holds {
        pipe.cmd("ZADD")
            .arg(AccountKeys::new(account).presence())
            .arg(hold_id)
            .arg(member(node, device))
            .ignore();
    }
}

/// Records that `device` no longer has a session on `node`, unless a hold newer than
/// `hold_id` replaced the one the release was decided on. Returns whether it was removed.
pub async fn release<C: ConnectionLike + Send>(
    conn: &mut C,
    node: &str,
    account: &str,
    device: &str,
    hold_id: u64,
) -> RedisResult<bool> {
    let removed: i64 = crate::scripts::PRESENCE_RELEASE
        .key(AccountKeys::new(account).presence())
        .arg(member(node, device))
        .arg(hold_id)
        .invoke_async(conn)
        .await?;
    Ok(removed == 1)
}

/// Every member of `account`'s presence (`<node>\n<device>`).
async fn members<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> RedisResult<Vec<String>> {
    redis::cmd("ZRANGE")
        .arg(AccountKeys::new(account).presence())
        .arg(0)
        .arg(-1)
        .query_async(conn)
        .await
}

/// Every node with a hold on `account`'s devices, live or not (each once).
pub async fn nodes<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> RedisResult<Vec<String>> {
    let members = members(conn, account).await?;
    Ok(distinct_nodes(&members))
}

/// The nodes of `members`, each once, in first-seen order.
pub fn distinct_nodes(members: &[String]) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    for member in members {
        let node = node_of(member);
        if !nodes.iter().any(|seen| seen == node) {
            nodes.push(node.to_owned());
        }
    }
    nodes
}

/// Devices of `account` with a session on a live gateway node at `now_ms` (those are
/// never pushed); the holds of dead nodes are forgotten on the way.
pub async fn online_devices<C: ConnectionLike + Send>(
    conn: &mut C,
    live: &LiveGateways,
    account: &str,
    now_ms: u64,
) -> RedisResult<HashSet<String>> {
    let members = members(conn, account).await?;
    let split = live.split(conn, distinct_nodes(&members), now_ms).await?;
    if !split.dead.is_empty() {
        let mut pipe = redis::pipe();
        add_forget_dead(&mut pipe, account, &split.dead, now_ms);
        pipe.query_async::<()>(conn).await?;
    }
    Ok(members
        .iter()
        .filter_map(|member| member.split_once('\n'))
        .filter(|(node, _)| split.live.iter().any(|live| live == node))
        .map(|(_, device)| device.to_owned())
        .collect())
}

/// Adds to `pipe` forgetting `account`'s holds on the `dead` nodes that were written more
/// than [`FORGET_MARGIN_MS`] before `now_ms`. Sent as `EVAL`, so it needs no loaded script
/// (it is rare: once per account after a node died).
pub fn add_forget_dead(pipe: &mut Pipeline, account: &str, dead: &[String], now_ms: u64) {
    pipe.cmd("EVAL")
        .arg(crate::scripts::PRESENCE_FORGET_SOURCE)
        .arg(1)
        .arg(AccountKeys::new(account).presence())
        .arg(now_ms.saturating_sub(FORGET_MARGIN_MS))
        .arg(dead)
        .ignore();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_names_its_node_and_device() {
        let member = member("gw-1", "phone\nwith a newline");
        assert_eq!(node_of(&member), "gw-1");
        assert_eq!(member.split_once('\n').unwrap().1, "phone\nwith a newline");
        assert_eq!(node_of("gw-old"), "gw-old");
    }

    #[test]
    fn nodes_are_listed_once() {
        let members = [member("a", "1"), member("b", "1"), member("a", "2")];
        assert_eq!(distinct_nodes(&members), ["a", "b"]);
    }

    #[test]
    fn a_node_id_with_a_newline_is_refused() {
        assert!(is_valid_node_id("gateway-7f3a"));
        assert!(!is_valid_node_id("gw\n1"));
        assert!(!is_valid_node_id(""));
    }
}
