//! The seqs an outbox may have lost when it was rebased, as its meta records them.
//!
//! A rebase (see `scripts/outbox_append.lua`) happens when an outbox is written by another
//! Redis history than the one that wrote it last (a promoted replica, a restart, a slot
//! moved). The replica may lack the tail the old server had handed out, so the head jumps
//! from its value `before` to a rebase point far above, and `(before, point]` is recorded:
//! a device whose last seq lies inside saw frames that are gone (it must reset), while a
//! device at `before` or below lost nothing (no frame of the new outbox lies in the range,
//! so its replay steps over it).

/// Meta field: the kept ranges, `<before>-<point>` separated by spaces, oldest first.
pub const LOST_FIELD: &str = "lost";
/// Meta field: every seq up to this one counts as lost (ranges pushed out of the list).
pub const LOST_FLOOR_FIELD: &str = "lost_floor";

/// The lost ranges of one outbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LostRanges {
    /// Seqs up to this one count as lost (0: none): a range pushed out of the bounded
    /// list still resets its devices, conservatively, instead of leaving a hole.
    floor: u64,
    /// `(before, point]` of each kept rebase, oldest first.
    ranges: Vec<(u64, u64)>,
}

impl LostRanges {
    /// Ranges `(before, point]` and a floor, as given.
    pub fn new(floor: u64, ranges: Vec<(u64, u64)>) -> Self {
        Self { floor, ranges }
    }

    /// Reads the meta's fields (absent: nothing lost). The script writes only well-formed
    /// ranges; anything else is ignored.
    pub fn parse(ranges: Option<&str>, floor: Option<&str>) -> Self {
        let ranges = ranges
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|range| {
                let (before, point) = range.split_once('-')?;
                Some((before.parse().ok()?, point.parse().ok()?))
            })
            .filter(|(before, point)| before < point)
            .collect();
        let floor = floor.and_then(|f| f.parse().ok()).unwrap_or(0);
        Self { floor, ranges }
    }

    /// Whether a device whose last seq is `seq` saw frames this outbox no longer has. The
    /// rebase point itself was handed out by neither history (the old one stopped below
    /// it, the new one goes on above), so no device holds it: it is where a replay stands
    /// once it has stepped over the jump ([`Self::skip`]).
    pub fn contains(&self, seq: u64) -> bool {
        (self.floor > 0 && seq <= self.floor)
            || self
                .ranges
                .iter()
                .any(|&(before, point)| before < seq && seq < point)
    }

    /// The seq after which the frame following `seq` comes: `seq` itself, or the rebase
    /// point of a jump that starts at `seq` (repeatedly: rebases may follow each other
    /// with nothing written between them).
    pub fn skip(&self, mut seq: u64) -> u64 {
        while let Some(&(_, point)) = self.ranges.iter().find(|&&(before, _)| before == seq) {
            seq = point;
        }
        seq
    }

    /// Whether nothing was ever lost.
    pub fn is_empty(&self) -> bool {
        self.floor == 0 && self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seq_inside_a_range_is_lost_and_its_ends_are_not() {
        let lost = LostRanges::new(0, vec![(100, 5_000)]);
        assert!(!lost.contains(100));
        assert!(lost.contains(101));
        assert!(lost.contains(4_999));
        assert!(
            !lost.contains(5_000),
            "where a replay stands after the jump"
        );
        assert!(!lost.contains(5_001));
        assert!(!lost.contains(99));
    }

    #[test]
    fn the_start_of_a_range_skips_to_its_point_and_chained_ranges_skip_through() {
        let lost = LostRanges::new(0, vec![(100, 5_000), (5_000, 9_000)]);
        assert_eq!(lost.skip(100), 9_000);
        assert_eq!(lost.skip(99), 99);
        assert_eq!(lost.skip(9_001), 9_001);
    }

    #[test]
    fn everything_up_to_the_floor_is_lost() {
        let lost = LostRanges::new(700, vec![(1_000, 2_000)]);
        assert!(lost.contains(1));
        assert!(lost.contains(700));
        assert!(!lost.contains(701));
        assert!(!lost.contains(1_000));
    }

    #[test]
    fn the_meta_fields_parse_and_junk_is_skipped() {
        let lost = LostRanges::parse(Some("1-5 x 9-7 10-20"), Some("3"));
        assert_eq!(lost, LostRanges::new(3, vec![(1, 5), (10, 20)]));
        assert!(LostRanges::parse(None, None).is_empty());
    }
}
