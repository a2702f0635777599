//! Presence is written when it changes, not while devices sit idle: a gateway holding
//! devices costs Redis one announcement of the node every few seconds, whatever their
//! number; and a gateway that dies stops counting once its announcement lapses: its
//! devices are pushed again, no frame is routed to it, and its holds are forgotten.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use iris_shared::keys::{self, AccountKeys};
use iris_shared::presence::gateways::{ANNOUNCE_INTERVAL_MS, LIVENESS_TTL_MS};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{gateway_node_id, ClusterSpec};
use iris_tests::http_recorder::HttpRecorder;
use iris_tests::resp::Reply;
use iris_tests::scratch_dir::ScratchDir;

const ADMIN_KEY: &str = "admin-key-for-presence-tests-0123456789";

/// The score (expiry, ms) of gateway `index`'s announcement, if any.
fn announced_until(cluster: &Cluster, index: usize) -> Option<u64> {
    match cluster.redis_command(&["ZSCORE", &keys::gateways(), &gateway_node_id(index)]) {
        Ok(Reply::Text(score)) => score.parse().ok(),
        _ => None,
    }
}

/// Waits until `condition` holds, checking every 50 ms, for at most `patience`.
async fn wait_until(patience: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `redis-cli monitor` on the cluster's Redis, its output in a file.
fn monitor(cluster: &Cluster, out: &std::path::Path) -> Child {
    Command::new("redis-cli")
        .args(["-p", &cluster.redis().port().to_string(), "monitor"])
        .stdout(Stdio::from(
            std::fs::File::create(out).expect("monitor file"),
        ))
        .stderr(Stdio::null())
        .spawn()
        .expect("starting redis-cli monitor")
}

/// Proves that while 40 paired devices of 20 accounts sit idle on a gateway, Redis sees no
/// command about their presence or any per-account key, only the node's announcement:
/// the next announcement (the positive signal that a renewal round has passed) is waited
/// for, and everything Redis ran meanwhile is read from `MONITOR`.
#[tokio::test]
async fn idle_devices_cost_redis_only_the_nodes_announcement() {
    // Every device pairs from this host: raise the per-address hello limit for 40.
    let spec = ClusterSpec::default()
        .gateways(1)
        .gateway_env("IRIS_HELLO_BURST", "100");
    let cluster = Cluster::start("presence-idle", spec).await;
    let mut devices = Vec::new();
    for account in 0..20 {
        let token = cluster.create_token(&format!("idle-{account}"));
        for device in ["phone", "tablet"] {
            let mut client = cluster.connect(0, device).await;
            client.pair(&token, &format!("{device}-{account}")).await;
            devices.push(client);
        }
    }
    let presence = AccountKeys::new("idle-0").presence();
    let held = cluster.redis_command(&["ZCARD", &presence]).unwrap();
    assert_eq!(held, Reply::Integer(2), "both devices of idle-0 are held");

    let scratch = ScratchDir::new("presence-idle-monitor");
    let log = scratch.path().join("monitor.log");
    let mut monitor = monitor(&cluster, &log);
    tokio::time::sleep(Duration::from_millis(300)).await; // MONITOR attached
    let before = announced_until(&cluster, 0).expect("the gateway announced itself");
    let patience = Duration::from_millis(ANNOUNCE_INTERVAL_MS * 2);
    wait_until(patience, "the next announcement", || {
        announced_until(&cluster, 0).is_some_and(|until| until > before)
    })
    .await;
    // One more full interval with the devices idle.
    let after_first = announced_until(&cluster, 0).unwrap();
    wait_until(patience, "one more announcement", || {
        announced_until(&cluster, 0).is_some_and(|until| until > after_first)
    })
    .await;
    monitor.kill().ok();
    monitor.wait().ok();

    let seen = std::fs::read_to_string(&log).expect("monitor output");
    let account_commands: Vec<&str> = seen.lines().filter(|line| line.contains("{a:")).collect();
    assert!(
        account_commands.is_empty(),
        "idle devices caused per-account commands: {account_commands:#?}"
    );
    let announcements = seen
        .lines()
        .filter(|line| line.contains("\"ZADD\"") && line.contains(&keys::gateways()))
        .count();
    assert!(announcements >= 2, "{seen}");
    for client in devices {
        client.close().await;
    }
}

/// Proves that after a gateway is killed, its device counts as online only until the
/// node's announcement lapses: a message published after that is pushed to the device,
/// and the dead node's hold is forgotten from the account's presence.
#[tokio::test]
async fn a_killed_gateways_devices_stop_counting_once_its_announcement_lapses() {
    let ntfy = HttpRecorder::start().await;
    let spec = ClusterSpec::default()
        .gateways(2)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_NTFY_URL", &ntfy.url());
    let mut cluster = Cluster::start("presence-lapse", spec).await;
    let token = cluster.create_token("lapse");
    let mut phone = cluster.connect(0, "phone").await;
    let hello = json!({ "v": 1, "id": 1, "type": "hello", "payload": {
        "token": token, "device_id": "phone-1", "ntfy_topic": "lapse-phone" } });
    phone.send(&hello).await;
    phone.recv_until("hello.ack").await;
    let presence = AccountKeys::new("lapse").presence();

    cluster.kill_gateway(0);
    let killed_at = Instant::now();
    let until = announced_until(&cluster, 0).expect("gateway 1 had announced itself");
    let lapse = Duration::from_millis(LIVENESS_TTL_MS + ANNOUNCE_INTERVAL_MS);
    wait_until(lapse, "the dead gateway's announcement to lapse", || {
        iris_shared::clock::now_ms() > until
    })
    .await;

    let body = json!({ "text": "After the lapse", "role": "cron" }).to_string();
    let path = "/api/v1/accounts/lapse/messages";
    let response = cluster
        .server_api(1, "POST", path, Some(ADMIN_KEY), Some(&body))
        .await;
    assert_eq!(response.status, 202, "{response:?}");
    let pushes = ntfy.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(pushes.len(), 1, "the device on the dead gateway was pushed");
    assert!(pushes[0].body.contains("After the lapse"), "{pushes:?}");
    assert!(
        killed_at.elapsed() <= Duration::from_millis(LIVENESS_TTL_MS) + Duration::from_secs(15),
        "pushed within the liveness bound"
    );
    wait_until(
        Duration::from_secs(5),
        "the dead hold to be forgotten",
        || cluster.redis_command(&["ZCARD", &presence]).unwrap() == Reply::Integer(0),
    )
    .await;
}
