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

/// Proves that a device which pairs for the first time and never sends anything (a fresh
/// app) streams another device's turn as it happens: with a slow agent its
/// `message.update` frames arrive spread over the turn, not in one burst at its end, and
/// the first of them comes long before the turn finishes.
#[tokio::test]
async fn a_fresh_device_that_never_syncs_streams_a_turn_as_it_happens() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "300");
    let cluster = Cluster::start("fresh-device-streams", spec).await;
    let token = cluster.create_token("frank");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut fresh = cluster.connect(1, "fresh").await;
    fresh.hello(&token, "fresh-1").await;

    let text = "a slow answer that takes several chunks to stream back to both devices";
    phone.send_message(text).await;
    let mut update_times = Vec::new();
    let mut frames = Vec::new();
    let started = std::time::Instant::now();
    loop {
        let frame = fresh
            .recv_within(Duration::from_secs(10))
            .await
            .expect("the fresh device gets the turn live");
        let kind = iris_tests::frames::type_of(&frame).to_owned();
        if kind == "message.update" {
            update_times.push(started.elapsed());
        }
        frames.push(frame);
        if kind == "agent.idle" {
            break;
        }
    }
    let idle_at = started.elapsed();
    assert_whole_streamed_turn("fresh", &frames, text, None);
    assert!(
        update_times.len() >= 3,
        "a slow turn streams several updates: {update_times:?}"
    );
    let first = update_times[0];
    let last = *update_times.last().expect("updates");
    assert!(
        last - first >= Duration::from_millis(500),
        "updates spread over the turn (first at {first:?}, last at {last:?})"
    );
    assert!(
        idle_at - first >= Duration::from_millis(500),
        "the first update came well before the turn ended ({first:?} vs {idle_at:?})"
    );
    phone.collect_turn().await;
}
