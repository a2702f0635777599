//! Catch-up after a disconnection: `sync {cursor}` replays exactly the outboxed frames a
//! device missed, on any gateway node, then live delivery carries on.

use serde_json::Value;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_u64, seq_of, seqs_and_types, type_of, without_id};
use iris_tests::turn::{assert_whole_streamed_turn, OUTBOXED_TURN_TYPES};

/// Proves that a device which disconnected from gateway 2 and missed a whole turn gets,
/// after reconnecting to gateway 1 and sending `sync` with its last seq, exactly the
/// turn's outboxed frames (`message`, `agent.busy`, `message.stop`, `agent.idle`: the same
/// seqs and contents the sending device saw, in order, once each), then `sync.done` whose
/// cursor is the last of them, and that the next turn then reaches it live.
#[tokio::test]
async fn a_device_that_missed_a_turn_syncs_on_the_other_gateway_and_gets_exactly_the_missed_frames()
{
    let cluster = Cluster::start("sync-missed-turn", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("alice");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    let tablet_ack = tablet.pair(&token, "tablet-1").await;
    let tablet_cursor = tablet
        .last_seq()
        .or_else(|| payload_u64(&tablet_ack, "sync_cursor"))
        .expect("hello.ack carries sync_cursor");
    tablet.close().await;

    let missed_text = "a message the tablet is not there to see";
    phone.send_message(missed_text).await;
    let phone_turn = phone.collect_turn().await;
    let missed: Vec<&Value> = phone_turn.iter().filter(|f| seq_of(f).is_some()).collect();
    let missed_seqs: Vec<(u64, String)> = seqs_and_types(&phone_turn);
    let missed_types: Vec<&str> = missed_seqs.iter().map(|(_, kind)| kind.as_str()).collect();
    assert_eq!(
        missed_types, OUTBOXED_TURN_TYPES,
        "phone's turn: {phone_turn:#?}"
    );
    let consecutive: Vec<u64> = (1..=missed.len() as u64)
        .map(|n| tablet_cursor + n)
        .collect();
    let seqs: Vec<u64> = missed_seqs.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(
        seqs, consecutive,
        "outbox seqs must follow the tablet's cursor: {phone_turn:#?}"
    );

    let mut tablet = cluster.connect(0, "tablet-reconnected").await;
    tablet.hello_resuming(&token, "tablet-1").await;
    let mut replay = tablet.sync(tablet_cursor).await;
    let done = replay.pop().expect("sync returns at least sync.done");
    assert_eq!(
        seqs_and_types(&replay),
        missed_seqs,
        "replayed: {replay:#?}"
    );
    assert_eq!(
        replay.len(),
        missed.len(),
        "replay holds unexpected frames: {replay:#?}"
    );
    for (replayed, original) in replay.iter().zip(&missed) {
        assert_eq!(
            without_id(replayed),
            without_id(original),
            "replay differs from the original"
        );
        assert_eq!(
            id_of(replayed),
            None,
            "a replay to another device carries an id: {replayed}"
        );
    }
    assert_eq!(type_of(&done), "sync.done", "{done}");
    assert_eq!(payload_u64(&done, "cursor"), seqs.last().copied(), "{done}");
    assert_ne!(
        done["payload"]["reset"], true,
        "a servable cursor was reset: {done}"
    );

    let live_text = "and this one the tablet sees live";
    phone.send_message(live_text).await;
    phone.collect_turn().await;
    let tablet_turn = tablet.collect_turn().await;
    assert_whole_streamed_turn("tablet-reconnected", &tablet_turn, live_text, None);
}
