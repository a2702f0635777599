//! A gateway's release of an account's presence races with a new hold when a device leaves
//! the node and comes back (or another device of the account arrives) at once: the two
//! writes go out on different connections. `presence::release_hold` removes only the hold
//! the release was decided on; these prove both orders end with the node present.

use iris_shared::presence::{hold, nodes, release_hold, HOLD_TTL_MS};
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;

async fn connection(redis: &RedisServer) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url())
        .expect("Redis URL")
        .get_multiplexed_async_connection()
        .await
        .expect("connecting to Redis")
}

/// Proves that a release landing after a newer hold leaves the node present, that a
/// release landing first is undone by the hold that follows it, and that a release with
/// no newer hold removes the node.
#[tokio::test]
async fn a_release_never_removes_a_newer_hold_in_either_order() {
    let scratch = ScratchDir::new("presence-release");
    let redis = RedisServer::start(scratch.path());
    let mut conn = connection(&redis).await;
    let accounts = ["alice".to_owned()];
    let now = 1_000_000_u64;
    let (first, second) = (now + HOLD_TTL_MS, now + HOLD_TTL_MS + 1);

    // The new hold lands first, then the release decided on the old one.
    hold(&mut conn, "gw-1", &accounts, now, first)
        .await
        .expect("hold");
    hold(&mut conn, "gw-1", &accounts, now, second)
        .await
        .expect("new hold");
    let removed = release_hold(&mut conn, "gw-1", "alice", first)
        .await
        .expect("release");
    assert!(!removed);
    assert_eq!(
        nodes(&mut conn, "alice", now).await.expect("nodes"),
        ["gw-1"]
    );

    // The release lands first, then the new hold.
    let removed = release_hold(&mut conn, "gw-1", "alice", second)
        .await
        .expect("release");
    assert!(removed);
    assert!(nodes(&mut conn, "alice", now)
        .await
        .expect("nodes")
        .is_empty());
    hold(&mut conn, "gw-1", &accounts, now, second + 1)
        .await
        .expect("hold again");
    assert_eq!(
        nodes(&mut conn, "alice", now).await.expect("nodes"),
        ["gw-1"]
    );

    // Another node's hold is never touched by this node's release.
    hold(&mut conn, "gw-2", &accounts, now, first)
        .await
        .expect("other node");
    release_hold(&mut conn, "gw-1", "alice", second + 1)
        .await
        .expect("release");
    assert_eq!(
        nodes(&mut conn, "alice", now).await.expect("nodes"),
        ["gw-2"]
    );
}
