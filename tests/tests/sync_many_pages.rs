//! Catch-up longer than one replay page: the outbox is read page by page and every missed
//! frame still arrives once, in order.

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{payload_u64, seq_of, type_of};

/// Turns the phone sends while the tablet is away; each leaves four outboxed frames, so
/// the replay spans two pages of `REPLAY_PAGE` frames.
const MISSED_TURNS: usize = iris_shared::outbox::REPLAY_PAGE / 4 + 10;

/// Proves that a device which missed more frames than one replay page holds gets all of
/// them after `sync`: consecutive seqs from its cursor to the head, none twice, then
/// `sync.done` at the head.
#[tokio::test]
async fn a_sync_spanning_several_replay_pages_delivers_every_missed_frame_once_in_order() {
    let spec = ClusterSpec::default()
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
        // The missed turns are written at machine rate, faster than a device may send.
        .gateway_env("IRIS_FRAME_RATE", "1000");
    let cluster = Cluster::start("sync-many-pages", spec).await;
    let token = cluster.create_token("dave");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    let cursor = payload_u64(&ack, "sync_cursor").expect("hello.ack carries sync_cursor");

    for turn in 0..MISSED_TURNS {
        phone
            .send_message(&format!("missed message number {turn}"))
            .await;
        phone.collect_turn().await;
    }
    let head = phone.last_seq().expect("the turns were outboxed");
    assert_eq!(head - cursor, (MISSED_TURNS * 4) as u64);

    let mut tablet = cluster.connect(0, "tablet").await;
    tablet.hello_resuming(&token, "tablet-1").await;
    let mut replay = tablet.sync(cursor).await;
    let done = replay.pop().expect("sync ends with sync.done");
    assert_eq!(type_of(&done), "sync.done", "{done}");
    assert_eq!(payload_u64(&done, "cursor"), Some(head), "{done}");
    let seqs: Vec<u64> = replay.iter().filter_map(seq_of).collect();
    let expected: Vec<u64> = (cursor + 1..=head).collect();
    assert_eq!(
        seqs.len(),
        replay.len(),
        "every replayed frame carries a seq"
    );
    assert!(
        seqs == expected,
        "replayed {} frames, not the {} consecutive seqs after the cursor",
        seqs.len(),
        expected.len()
    );
}
