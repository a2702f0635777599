//! One connection to the store, whatever its shape: a multiplexed connection to one server
//! (plain Redis, or the master the Sentinels name), or a Redis Cluster connection that
//! routes each command to the master of its key's slot and follows MOVED, ASK and
//! failovers by itself.
//!
//! On a Cluster a pipeline whose commands name keys in several slots (a frame's delivery
//! to several gateway nodes, a page of token records) cannot go to one server; it is split
//! into one pipeline per slot, sent concurrently (one round trip in all, as on one server)
//! and its replies put back in order. Keyless commands (a `SCRIPT LOAD` ahead of the calls
//! of that script) go with every part, since each part may reach another server. A transaction (`MULTI`) is never split: every
//! transaction names keys of one slot only, which the store's key design guarantees.

use std::collections::HashMap;

use futures_util::future::try_join_all;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};
use redis::{Arg, Cmd, Pipeline, RedisFuture, Value};

/// A connection to one server or to a Redis Cluster; cheap to clone (clones share it).
#[derive(Clone)]
pub enum Link {
    /// One server.
    Server(MultiplexedConnection),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

impl Link {
    /// Sends `cmd`, which names no key, to the master serving `routing_key`'s slot (on one
    /// server: to that server). For commands about a connection of that server, such as
    /// `CLIENT ID` and `CLIENT UNBLOCK`.
    pub async fn send_beside(&mut self, cmd: &Cmd, routing_key: &str) -> redis::RedisResult<Value> {
        match self {
            Self::Server(conn) => conn.req_packed_command(cmd).await,
            Self::Cluster(conn) => {
                let route = Route::with_key(routing_key.as_bytes(), SlotAddr::Master);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                conn.route_command(cmd.clone(), routing).await
            }
        }
    }
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Server(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Server(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => {
                let by_slot = (!pipeline.is_transaction())
                    .then(|| split_by_slot(pipeline))
                    .flatten();
                match by_slot {
                    None => conn.req_packed_commands(pipeline, offset, count),
                    Some(parts) => Box::pin(run_split(conn.clone(), parts, pipeline.len())),
                }
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Server(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}

/// One slot's share of a split pipeline: the positions of its commands (`None` for a copy
/// of a keyless command whose reply another part gives), and the commands.
struct SlotPart {
    positions: Vec<Option<usize>>,
    pipeline: Pipeline,
}

/// The pipeline's commands grouped by slot (keyless ones copied into every group), or
/// `None` when they all go to one slot and the pipeline can be sent as it is.
fn split_by_slot(pipeline: &Pipeline) -> Option<Vec<SlotPart>> {
    let slots: Vec<Option<Slot>> = pipeline
        .cmd_iter()
        .map(|cmd| first_key(cmd).map(Slot::for_key))
        .collect();
    let mut distinct = slots.iter().flatten();
    let first = *distinct.next()?;
    if distinct.all(|slot| *slot == first) {
        return None;
    }
    let mut order: Vec<Slot> = Vec::new();
    let mut parts: HashMap<Slot, SlotPart> = HashMap::new();
    let mut keyless: Vec<(usize, &Cmd)> = Vec::new();
    for (position, (cmd, slot)) in pipeline.cmd_iter().zip(slots).enumerate() {
        let Some(slot) = slot else {
            keyless.push((position, cmd));
            for part in parts.values_mut() {
                part.positions.push(None);
                part.pipeline.add_command(cmd.clone());
            }
            continue;
        };
        let part = parts.entry(slot).or_insert_with(|| {
            order.push(slot);
            // A part begun late still runs the keyless commands sent before its first.
            let mut part = SlotPart {
                positions: Vec::new(),
                pipeline: Pipeline::new(),
            };
            for (_, earlier) in &keyless {
                part.positions.push(None);
                part.pipeline.add_command((*earlier).clone());
            }
            part
        });
        part.positions.push(Some(position));
        part.pipeline.add_command(cmd.clone());
    }
    let mut parts: Vec<SlotPart> = order
        .into_iter()
        .filter_map(|slot| parts.remove(&slot))
        .collect();
    // The first part answers for the keyless commands.
    let first_part = parts.first_mut()?;
    let mut copies = first_part.positions.iter_mut().filter(|p| p.is_none());
    for (position, _) in &keyless {
        if let Some(copy) = copies.next() {
            *copy = Some(*position);
        }
    }
    Some(parts)
}

/// Sends every part at once and puts the replies back in the original order.
async fn run_split(
    conn: ClusterConnection,
    parts: Vec<SlotPart>,
    len: usize,
) -> redis::RedisResult<Vec<Value>> {
    let sent = parts.iter().map(|part| {
        let mut conn = conn.clone();
        async move {
            conn.req_packed_commands(&part.pipeline, 0, part.pipeline.len())
                .await
        }
    });
    let replies = try_join_all(sent).await?;
    let mut ordered = vec![Value::Nil; len];
    for (part, values) in parts.iter().zip(replies) {
        for (position, value) in part.positions.iter().zip(values) {
            if let Some(position) = *position {
                ordered[position] = value;
            }
        }
    }
    Ok(ordered)
}

/// The first key `cmd` names, by the argument layout of the commands the store sends;
/// `None` for commands without keys.
fn first_key(cmd: &Cmd) -> Option<&[u8]> {
    let args: Vec<&[u8]> = cmd
        .args_iter()
        .filter_map(|arg| match arg {
            Arg::Simple(bytes) => Some(bytes),
            _ => None,
        })
        .collect();
    let name = args.first()?.to_ascii_uppercase();
    match name.as_slice() {
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO" => {
            let keys: usize = std::str::from_utf8(args.get(2)?).ok()?.parse().ok()?;
            (keys > 0).then(|| args.get(3).copied()).flatten()
        }
        b"XREAD" | b"XREADGROUP" => {
            let streams = args
                .iter()
                .position(|arg| arg.eq_ignore_ascii_case(b"STREAMS"))?;
            args.get(streams + 1).copied()
        }
        b"PING" | b"CLIENT" | b"INFO" | b"CLUSTER" | b"PUBLISH" | b"SCRIPT" | b"TIME" | b"ECHO"
        | b"ROLE" | b"WAIT" | b"MULTI" | b"EXEC" | b"FUNCTION" | b"CONFIG" => None,
        _ => args.get(1).copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_key_is_found_where_each_command_names_it() {
        let mut eval = redis::cmd("EVALSHA");
        eval.arg("abc")
            .arg(2)
            .arg("{a:x}:k1")
            .arg("{a:x}:k2")
            .arg("v");
        assert_eq!(first_key(&eval), Some(&b"{a:x}:k1"[..]));
        let mut read = redis::cmd("XREADGROUP");
        read.arg("GROUP").arg("g").arg("c").arg("COUNT").arg(5);
        read.arg("STREAMS").arg("s1").arg(">");
        assert_eq!(first_key(&read), Some(&b"s1"[..]));
        let mut add = redis::cmd("XADD");
        add.arg("stream").arg("*").arg("f").arg("v");
        assert_eq!(first_key(&add), Some(&b"stream"[..]));
        assert_eq!(first_key(redis::cmd("PING").arg("x")), None);
        assert_eq!(first_key(redis::cmd("EVAL").arg("return 1").arg(0)), None);
    }

    #[test]
    fn a_pipeline_is_split_only_when_its_keys_span_slots() {
        let mut one_slot = redis::pipe();
        one_slot.cmd("HSET").arg("iris:{a:x}:k1").arg("f").arg(1);
        one_slot.cmd("PING");
        one_slot.cmd("HGET").arg("iris:{a:x}:k2").arg("f");
        assert!(split_by_slot(&one_slot).is_none());

        let mut spread = redis::pipe();
        spread.cmd("SCRIPT").arg("LOAD").arg("return 1");
        spread.cmd("HSET").arg("iris:{a:x}:k1").arg("f").arg(1);
        spread
            .cmd("XADD")
            .arg("iris:node:g1:deliver")
            .arg("*")
            .arg("f")
            .arg(1);
        spread.cmd("HGET").arg("iris:{a:x}:k2").arg("f");
        let parts = split_by_slot(&spread).expect("two slots");
        let positions: Vec<Vec<Option<usize>>> =
            parts.iter().map(|p| p.positions.clone()).collect();
        // Both parts load the script; the first one's reply stands for it.
        assert_eq!(
            positions,
            vec![vec![Some(0), Some(1), Some(3)], vec![None, Some(2)]]
        );
    }
}
