//! Devices that do not resume (never send `sync`) get their frames live, without waiting
//! for the sync grace period.

use std::time::Duration;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::turn::{assert_whole_streamed_turn, is_user_message};

/// Proves that a device which pairs and sends `message.send` straight away (no `sync`)
/// gets its echoed user message and the whole turn promptly, even with a sync grace far
/// longer than the test allows: any request other than `sync` starts live delivery.
#[tokio::test]
async fn a_device_that_sends_without_syncing_gets_its_turn_without_waiting_for_the_grace() {
    let spec = ClusterSpec::default().gateway_env("IRIS_SYNC_GRACE_MS", "60000");
    let cluster = Cluster::start("live-without-sync", spec).await;
    let token = cluster.create_token("carol");
    let mut phone = cluster.connect(0, "phone").await;
    phone.hello(&token, "phone-1").await;

    let text = "no sync here, answer me now";
    let request_id = phone.send_message(text).await;
    let first = phone
        .recv_within(Duration::from_secs(2))
        .await
        .expect("the echoed user message arrives within 2 s, not after the 60 s grace");
    assert!(is_user_message(&first, text), "first frame: {first}");
    assert_eq!(first["id"], request_id);

    let mut turn = vec![first];
    turn.extend(phone.collect_turn().await);
    assert_whole_streamed_turn("phone", &turn, text, Some(request_id));
}
