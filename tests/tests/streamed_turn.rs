//! Fan-out of a streamed agent turn to every device of an account, across gateway nodes.

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::turn::assert_whole_streamed_turn;

/// Proves that when device A (on gateway 1) sends a message, both A and device B (same
/// account, on gateway 2) receive the whole streamed turn: the user's message (with the
/// request id on A only), `agent.busy`, `message.start`, at least two `message.update`,
/// `message.stop` whose final text contains the message, and `agent.idle`.
#[tokio::test]
async fn two_devices_on_two_gateways_both_see_the_whole_streamed_turn() {
    let cluster = Cluster::start("streamed-turn", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    let text = "hello from the phone, please stream this back";
    let request_id = phone.send_message(text).await;
    let phone_frames = phone.collect_turn().await;
    let tablet_frames = tablet.collect_turn().await;

    assert_whole_streamed_turn("phone", &phone_frames, text, Some(request_id));
    assert_whole_streamed_turn("tablet", &tablet_frames, text, None);
}
