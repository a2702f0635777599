//! The grid every session's heartbeat ticks on: whole seconds since the process started.
//! Sessions whose pings fall in the same second share one timer wakeup, so holding many
//! idle connections costs a wakeup or two a second rather than one per ping.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// Where the grid starts.
static GRID_START: LazyLock<Instant> = LazyLock::new(Instant::now);
/// Distance between two grid points.
pub const GRID_STEP: Duration = Duration::from_secs(1);

/// How long from `now` until the next grid point (at most [`GRID_STEP`]).
pub fn until_next_point(now: Instant) -> Duration {
    let step = GRID_STEP.as_nanos();
    let into = now.saturating_duration_since(*GRID_START).as_nanos() % step;
    Duration::from_nanos(u64::try_from(step - into).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_started_apart_land_on_the_same_grid_points() {
        let start = *GRID_START;
        let first = start + Duration::from_millis(120);
        let second = start + Duration::from_millis(870);
        assert_eq!(first + until_next_point(first), start + GRID_STEP);
        assert_eq!(second + until_next_point(second), start + GRID_STEP);
        let on_a_point = start + GRID_STEP * 3;
        assert_eq!(until_next_point(on_a_point), GRID_STEP);
    }
}
