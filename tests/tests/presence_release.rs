//! Presence in Redis (`iris_shared::presence`): a gateway's release of a device's hold
//! races with a new hold when the device leaves the node and comes back at once (the two
//! writes go out on different connections); holds of dead gateway nodes stop counting and
//! are forgotten, but never the newer holds of a node that came back under the same id.

use iris_shared::presence::gateways::{self, LiveGateways, LIVENESS_TTL_MS};
use iris_shared::presence::{
    add_forget_dead, hold, nodes, online_devices, release, FORGET_MARGIN_MS,
};
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;

async fn connection(redis: &RedisServer) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url())
        .expect("Redis URL")
        .get_multiplexed_async_connection()
        .await
        .expect("connecting to Redis")
}

fn device(account: &str, device: &str) -> (String, String) {
    (account.to_owned(), device.to_owned())
}

/// Proves that a release landing after a newer hold leaves the device held, that a release
/// landing first is undone by the hold that follows it, that a release with no newer hold
/// removes it, and that one device's release never touches another device or node.
#[tokio::test]
async fn a_release_never_removes_a_newer_hold_in_either_order() {
    let scratch = ScratchDir::new("presence-release");
    let redis = RedisServer::start(scratch.path());
    let mut conn = connection(&redis).await;
    let phone = [device("alice", "phone")];
    let now = 1_000_000_u64;

    // The new hold lands first, then the release decided on the old one.
    hold(&mut conn, "gw-1", &phone, now, now).await.unwrap();
    hold(&mut conn, "gw-1", &phone, now + 1, now).await.unwrap();
    assert!(!release(&mut conn, "gw-1", "alice", "phone", now)
        .await
        .unwrap());
    assert_eq!(nodes(&mut conn, "alice").await.unwrap(), ["gw-1"]);

    // The release lands first, then the new hold.
    assert!(release(&mut conn, "gw-1", "alice", "phone", now + 1)
        .await
        .unwrap());
    assert!(nodes(&mut conn, "alice").await.unwrap().is_empty());
    hold(&mut conn, "gw-1", &phone, now + 2, now).await.unwrap();
    assert_eq!(nodes(&mut conn, "alice").await.unwrap(), ["gw-1"]);

    // Another node's hold, and another device's, are never touched by this release.
    hold(&mut conn, "gw-2", &phone, now, now).await.unwrap();
    hold(
        &mut conn,
        "gw-1",
        &[device("alice", "tablet")],
        now + 3,
        now,
    )
    .await
    .unwrap();
    release(&mut conn, "gw-1", "alice", "phone", now + 2)
        .await
        .unwrap();
    let mut held = nodes(&mut conn, "alice").await.unwrap();
    held.sort();
    assert_eq!(held, ["gw-1", "gw-2"]);
}

/// Proves that a device counts as online only while its node's announcement lasts, that
/// the dead node's holds are then forgotten, and that a node which came back under the
/// same id keeps the holds it wrote since.
#[tokio::test]
async fn holds_of_a_lapsed_node_stop_counting_and_are_forgotten_but_newer_ones_stay() {
    let scratch = ScratchDir::new("presence-lapse");
    let redis = RedisServer::start(scratch.path());
    let mut conn = connection(&redis).await;
    let live = LiveGateways::default();
    let now = clock_ms();

    hold(&mut conn, "gw-1", &[device("bob", "phone")], now, now)
        .await
        .unwrap();
    hold(&mut conn, "gw-2", &[device("bob", "tablet")], now, now)
        .await
        .unwrap();
    let online = online_devices(&mut conn, &live, "bob", now).await.unwrap();
    assert_eq!(online.len(), 2, "{online:?}");

    // gw-2 stops announcing: past its liveness only gw-1's device is online, and gw-2's
    // hold is gone from Redis.
    let later = now + LIVENESS_TTL_MS + 1;
    gateways::announce(&mut conn, "gw-1", later).await.unwrap();
    let online = online_devices(&mut conn, &live, "bob", later)
        .await
        .unwrap();
    assert_eq!(online.into_iter().collect::<Vec<_>>(), ["phone"]);
    assert_eq!(nodes(&mut conn, "bob").await.unwrap(), ["gw-1"]);

    // gw-1 dies too, but restarts under the same id and holds a device again just before a
    // writer that still saw it dead forgets its old holds: the new hold stays.
    let restart = later + FORGET_MARGIN_MS + 1;
    hold(
        &mut conn,
        "gw-1",
        &[device("bob", "laptop")],
        restart,
        restart,
    )
    .await
    .unwrap();
    let mut pipe = redis::pipe();
    add_forget_dead(&mut pipe, "bob", &["gw-1".to_owned()], restart);
    pipe.query_async::<()>(&mut conn).await.unwrap();
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg(iris_shared::keys::AccountKeys::new("bob").presence())
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(members, ["gw-1\nlaptop"]);
}

fn clock_ms() -> u64 {
    iris_shared::clock::now_ms()
}
