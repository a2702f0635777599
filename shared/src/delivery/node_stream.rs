//! The delivery stream of each gateway node (`iris:node:<id>:deliver`): workers append
//! the frames for the devices a node holds, and the node's one blocking read takes them.

use super::RoutedFrame;
use crate::keys;

/// Most entries a node's delivery stream keeps; a node that falls further behind fills
/// the gap from the outbox.
pub const NODE_STREAM_MAX_LEN: u64 = 100_000;
/// A dead node's delivery stream disappears this long after its last renewal.
pub const NODE_STREAM_TTL_SECS: u64 = 600;

/// Tells the gateway nodes holding devices of `account` that the token with hash
/// `token_hash` is revoked, so they close the sessions paired with it.
pub async fn announce_revoked_token<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_hash: &str,
    nodes: &[String],
) -> redis::RedisResult<()> {
    let notice = RoutedFrame {
        revoked_token: Some(token_hash.to_owned()),
        ..RoutedFrame::new(account, None, "{}")
    };
    publish_to_nodes(conn, &notice, nodes).await
}

/// Publishes `frame` to the delivery streams of `nodes`, in one round trip.
pub async fn publish_to_nodes<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    frame: &RoutedFrame,
    nodes: &[String],
) -> redis::RedisResult<()> {
    if nodes.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    add_publish_to_nodes(&mut pipe, frame, nodes);
    pipe.query_async(conn).await
}

/// Adds the `XADD`s that publish `frame` to the delivery streams of `nodes` to `pipe`;
/// their replies are ignored.
pub fn add_publish_to_nodes(pipe: &mut redis::Pipeline, frame: &RoutedFrame, nodes: &[String]) {
    if nodes.is_empty() {
        return;
    }
    let fields = frame.fields(true);
    for node in nodes {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(keys::node_delivery(node))
            .arg("MAXLEN")
            .arg("~")
            .arg(NODE_STREAM_MAX_LEN)
            .arg("*");
        for (name, value) in &fields {
            cmd.arg(*name).arg(value);
        }
        pipe.add_command(cmd).ignore();
    }
}

/// One entry of a node's delivery stream.
#[derive(Debug)]
pub struct NodeStreamEntry {
    /// The entry's id, where the next read starts after.
    pub id: String,
    /// The frame it carries; `None` if it does not read as one.
    pub frame: Option<RoutedFrame>,
}

/// An `XREAD` reply of one stream, decoded straight into entry ids and field pairs (moved
/// out of the reply, no map per entry): `[(stream, [(id, [(field, value)])])]`.
type StreamReadReply = Vec<(String, Vec<(String, Vec<(String, String)>)>)>;

/// Reads up to `count` entries after `after_id` from the delivery stream of gateway node
/// `node_id`; with none there yet, waits up to `block_ms` for one (and may return none).
pub async fn read_node_stream<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    node_id: &str,
    after_id: &str,
    count: usize,
    block_ms: u64,
) -> redis::RedisResult<Vec<NodeStreamEntry>> {
    let reply: Option<StreamReadReply> = redis::cmd("XREAD")
        .arg("COUNT")
        .arg(count)
        .arg("BLOCK")
        .arg(block_ms)
        .arg("STREAMS")
        .arg(keys::node_delivery(node_id))
        .arg(after_id)
        .query_async(conn)
        .await?;
    let entries = reply.into_iter().flatten().flat_map(|(_stream, ids)| ids);
    Ok(entries
        .map(|(id, fields)| NodeStreamEntry {
            id,
            frame: RoutedFrame::from_pairs(fields, None, None),
        })
        .collect())
}

/// Keeps the delivery stream of gateway node `node_id` for [`NODE_STREAM_TTL_SECS`] more:
/// a dead node's stream expires. A write, so a demoted master refuses it (READONLY).
pub async fn renew_node_stream<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    node_id: &str,
) -> redis::RedisResult<()> {
    redis::cmd("EXPIRE")
        .arg(keys::node_delivery(node_id))
        .arg(NODE_STREAM_TTL_SECS)
        .query_async(conn)
        .await
}
