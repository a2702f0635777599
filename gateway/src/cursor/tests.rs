//! The delivery cursor's rules, case by case: live frames, syncs, replays, gap fills and
//! rebased outboxes.

use super::*;
use iris_shared::outbox::LostRanges;

fn frame(seq: Option<u64>) -> Arc<RoutedFrame> {
    Arc::new(RoutedFrame::new("a", seq, "{}"))
}

fn seqs(frames: &[RoutedFrame]) -> Vec<u64> {
    frames.iter().filter_map(|f| f.seq).collect()
}

fn window(head: u64, oldest: u64) -> OutboxWindow {
    OutboxWindow::new(head, Some(oldest))
}

fn page(seqs: impl IntoIterator<Item = u64>) -> ReplayPage {
    ReplayPage {
        frames: seqs
            .into_iter()
            .map(|s| (*frame(Some(s))).clone())
            .collect(),
        ..ReplayPage::default()
    }
}

/// A page of an outbox rebased from 100 to 5_000 (head 5_010).
fn rebased_page(seqs: impl IntoIterator<Item = u64>) -> ReplayPage {
    ReplayPage {
        head: 5_010,
        lost: LostRanges::new(0, vec![(100, 5_000)]),
        ..page(seqs)
    }
}

fn frames_of(replayed: Result<Replayed, ReplayBroken>) -> (Vec<RoutedFrame>, bool) {
    match replayed {
        Ok(Replayed::Frames {
            to_send,
            reached_end,
        }) => (to_send, reached_end),
        other => panic!("not frames: {other:?}"),
    }
}

#[test]
fn frames_wait_for_the_first_sync_then_flow_after_the_replay() {
    let mut cursor = DeliveryCursor::new(10);
    assert_eq!(cursor.on_live(frame(Some(11))), LiveStep::Held);
    let start = cursor.begin_sync(7, window(11, 1));
    assert_eq!(start, SyncStart::Replay(ReplayRange { after: 7, to: 11 }));
    let page = page(8..=11);
    let (sent, done) = frames_of(cursor.on_replayed(page, false));
    assert_eq!(seqs(&sent), vec![8, 9, 10, 11]);
    assert!(done);
    let (released, gap) = cursor.finish_replay();
    assert!(released.is_empty(), "seq 11 was replayed, not sent twice");
    assert_eq!(gap, None);
    assert!(matches!(cursor.on_live(frame(Some(12))), LiveStep::Send(_)));
}

#[test]
fn a_late_sync_replays_only_what_preceded_pairing() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.start_live();
    assert!(matches!(cursor.on_live(frame(Some(11))), LiveStep::Send(_)));
    let start = cursor.begin_sync(8, window(11, 1));
    assert_eq!(start, SyncStart::Replay(ReplayRange { after: 8, to: 10 }));
}

#[test]
fn a_gap_in_live_frames_is_filled_from_the_outbox_before_the_frame() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.start_live();
    let step = cursor.on_live(frame(Some(13)));
    assert_eq!(step, LiveStep::FillGap(ReplayRange { after: 10, to: 12 }));
    assert_eq!(cursor.on_live(frame(None)), LiveStep::Held);
    let page = page(11..=13);
    let (sent, done) = frames_of(cursor.on_replayed(page, false));
    assert_eq!(seqs(&sent), vec![11, 12]);
    assert!(done);
    let (released, gap) = cursor.finish_replay();
    assert_eq!(released.len(), 2);
    assert_eq!(released[0].seq, Some(13));
    assert_eq!(gap, None);
}

#[test]
fn frames_left_in_the_outbox_are_read_before_the_catch_up_frames() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.start_live();
    assert_eq!(
        cursor.on_skipped(14),
        Some(ReplayRange { after: 10, to: 14 })
    );
    assert_eq!(cursor.on_live(frame(None)), LiveStep::Held);
    let page = page(11..=14);
    let (sent, done) = frames_of(cursor.on_replayed(page, false));
    assert_eq!(seqs(&sent), vec![11, 12, 13, 14]);
    assert!(done);
    let (released, gap) = cursor.finish_replay();
    assert_eq!(released.len(), 1, "the held live frame follows the replay");
    assert_eq!(gap, None);
    assert_eq!(cursor.delivered(), 14);
}

#[test]
fn frames_skipped_during_a_sync_are_read_when_the_sync_ends() {
    let mut cursor = DeliveryCursor::new(10);
    let start = cursor.begin_sync(8, window(10, 1));
    assert_eq!(start, SyncStart::Replay(ReplayRange { after: 8, to: 10 }));
    assert_eq!(cursor.on_skipped(12), None, "the sync is still running");
    let page = page(9..=10);
    frames_of(cursor.on_replayed(page, false));
    let (released, gap) = cursor.finish_replay();
    assert!(released.is_empty());
    assert_eq!(gap, Some(ReplayRange { after: 10, to: 12 }));
}

#[test]
fn duplicates_of_delivered_frames_are_dropped() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.start_live();
    assert!(matches!(cursor.on_live(frame(Some(11))), LiveStep::Send(_)));
    assert_eq!(cursor.on_live(frame(Some(11))), LiveStep::Duplicate);
}

#[test]
fn a_cursor_the_outbox_cannot_serve_resets() {
    let mut cursor = DeliveryCursor::new(100);
    assert_eq!(
        cursor.begin_sync(3, window(100, 50)),
        SyncStart::Reset { head: 100 }
    );
}

#[test]
fn a_replay_that_finds_a_hole_is_broken_not_partial() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.begin_sync(5, window(10, 1));
    let page = page([6, 8]);
    assert_eq!(
        cursor.on_replayed(page, false),
        Err(ReplayBroken { missing: 7 })
    );
}

#[test]
fn a_replay_pages_until_it_reaches_its_end() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.begin_sync(4, window(10, 1));
    let first = page(5..=7);
    let (_, done) = frames_of(cursor.on_replayed(first, true));
    assert!(!done);
    assert_eq!(cursor.replay_after(), 7);
    let second = page(8..=10);
    let (sent, done) = frames_of(cursor.on_replayed(second, true));
    assert_eq!(seqs(&sent), vec![8, 9, 10]);
    assert!(done);
}

#[test]
fn catching_up_after_an_outage_replays_only_what_was_missed() {
    let mut cursor = DeliveryCursor::new(10);
    cursor.start_live();
    assert_eq!(cursor.on_skipped(10), None, "nothing was missed");
    assert_eq!(
        cursor.on_skipped(12),
        Some(ReplayRange { after: 10, to: 12 })
    );
    assert_eq!(cursor.on_skipped(13), None, "not while a replay runs");
    let page = page(11..=12);
    frames_of(cursor.on_replayed(page, false));
    let (_, gap) = cursor.finish_replay();
    assert_eq!(
        gap,
        Some(ReplayRange { after: 12, to: 13 }),
        "the head seen during the replay is read when it ends"
    );
}

#[test]
fn a_live_device_before_a_rebase_jump_steps_over_it_without_a_reset() {
    let mut cursor = DeliveryCursor::new(100);
    cursor.start_live();
    let step = cursor.on_live(frame(Some(5_001)));
    assert_eq!(
        step,
        LiveStep::FillGap(ReplayRange {
            after: 100,
            to: 5_000
        })
    );
    let (sent, done) = frames_of(cursor.on_replayed(rebased_page([5_001]), false));
    assert!(sent.is_empty());
    assert!(done, "the jump holds nothing to fill");
    let (released, gap) = cursor.finish_replay();
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].seq, Some(5_001));
    assert_eq!(gap, None);
    assert!(matches!(
        cursor.on_live(frame(Some(5_002))),
        LiveStep::Send(_)
    ));
}

#[test]
fn a_live_device_whose_last_seq_was_lost_is_reset_and_gets_what_follows_the_head() {
    let mut cursor = DeliveryCursor::new(100);
    cursor.start_live();
    assert!(matches!(
        cursor.on_live(frame(Some(101))),
        LiveStep::Send(_)
    ));
    assert!(matches!(
        cursor.on_live(frame(Some(102))),
        LiveStep::Send(_)
    ));
    // The outbox lost 101 and 102 in a failover and was rebased.
    let step = cursor.on_live(frame(Some(5_001)));
    assert!(matches!(step, LiveStep::FillGap(_)), "{step:?}");
    assert_eq!(cursor.on_live(frame(Some(5_011))), LiveStep::Held);
    assert_eq!(
        cursor.on_replayed(rebased_page(5_001..=5_010), false),
        Ok(Replayed::Lost { head: 5_010 })
    );
    let (released, gap) = cursor.reset_to(5_010);
    assert_eq!(gap, None);
    assert_eq!(
        released.iter().map(|f| f.seq).collect::<Vec<_>>(),
        vec![Some(5_011)],
        "frames up to the head are the reloaded history's"
    );
    assert_eq!(cursor.delivered(), 5_011);
}

#[test]
fn a_sync_replay_steps_over_a_rebase_jump() {
    let mut cursor = DeliveryCursor::new(5_010);
    let lost_window = OutboxWindow {
        lost: LostRanges::new(0, vec![(100, 5_000)]),
        ..window(5_010, 1)
    };
    let start = cursor.begin_sync(98, lost_window);
    assert_eq!(
        start,
        SyncStart::Replay(ReplayRange {
            after: 98,
            to: 5_010
        })
    );
    let replay = rebased_page([99, 100].into_iter().chain(5_001..=5_010));
    let (sent, done) = frames_of(cursor.on_replayed(replay, false));
    assert_eq!(
        seqs(&sent),
        [99, 100]
            .into_iter()
            .chain(5_001..=5_010)
            .collect::<Vec<_>>()
    );
    assert!(done);
}

#[test]
fn a_hole_outside_any_lost_range_still_breaks_the_replay() {
    let mut cursor = DeliveryCursor::new(5_010);
    cursor.begin_sync(5_002, window(5_010, 1));
    assert_eq!(
        cursor.on_replayed(rebased_page([5_003, 5_005]), false),
        Err(ReplayBroken { missing: 5_004 })
    );
}
