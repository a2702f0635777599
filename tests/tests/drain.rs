//! Graceful drain of a gateway: on SIGTERM it stops being ready, tells its devices the
//! server is restarting and closes them with the "reconnect" code; they resume elsewhere.

use std::time::Duration;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{payload_str, type_of};

/// Proves that a gateway told to stop (SIGTERM) sends its devices
/// `status {state: restarting}` and closes them with 4100, and that a device reconnecting
/// to the other gateway and syncing from its last seq misses nothing said meanwhile.
#[tokio::test]
async fn a_draining_gateway_sends_restarting_and_devices_resume_on_another_gateway() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let mut cluster = Cluster::start("drain", spec).await;
    let token = cluster.create_token("xena");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    phone.send_message("before the drain").await;
    phone.collect_turn().await;
    let cursor = phone.last_seq().expect("the turn was outboxed");

    cluster.terminate_gateway(0);
    let status = phone.recv_until("status").await.pop().unwrap();
    assert_eq!(
        payload_str(&status, "state"),
        Some("restarting"),
        "{status}"
    );
    assert_eq!(phone.expect_close().await, Some(4100));

    tablet.send_message("while the phone moves").await;
    tablet.collect_turn().await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    let mut phone = cluster.connect(1, "phone-again").await;
    phone.hello_resuming(&token, "phone-1").await;
    let replay = phone.sync(cursor).await;
    let texts: Vec<&str> = replay
        .iter()
        .filter(|f| type_of(f) == "message")
        .filter_map(|f| payload_str(f, "text"))
        .collect();
    assert_eq!(texts, ["while the phone moves"], "{replay:#?}");
}
