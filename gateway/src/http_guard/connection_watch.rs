//! Connections that end without one request reaching the gateway's handlers. actix-http
//! answers some heads itself before any handler or middleware runs: 408 for a head still
//! incomplete after `IRIS_REQUEST_HEAD_TIMEOUT_MS` (a slowloris client), 431 for one over
//! its 128 KiB buffer or 96 fields, 400 for one that does not parse. Each connection gets a
//! watch when it is accepted; the first request that reaches `screen` marks it, and a watch
//! dropped unmarked (the connection is gone) counts `request_head_timeout` when the
//! connection lasted the head timeout (less the step of actix-http's clock), and
//! `closed_before_request` when it ended sooner.

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::reason::Reason;
use crate::metrics::Metrics;

/// actix-http sets the head deadline from a clock it advances every 500 ms, so the timer
/// can fire up to this much before the full timeout has passed since the accept.
const HEAD_CLOCK_STEP: Duration = Duration::from_millis(500);

/// Whether one accepted connection has produced a request yet.
#[derive(Debug)]
pub struct ConnectionWatch {
    metrics: Arc<Metrics>,
    accepted: Instant,
    head_timeout: Duration,
    served: Cell<bool>,
}

impl ConnectionWatch {
    /// Watches a connection accepted now, whose first head must arrive within
    /// `head_timeout`.
    pub fn new(metrics: Arc<Metrics>, head_timeout: Duration) -> Self {
        Self {
            metrics,
            accepted: Instant::now(),
            head_timeout,
            served: Cell::new(false),
        }
    }

    /// A request of this connection reached the gateway.
    pub fn mark_served(&self) {
        self.served.set(true);
    }
}

impl Drop for ConnectionWatch {
    fn drop(&mut self) {
        if self.served.get() {
            return;
        }
        // Whatever ended a connection before the head timer could fire was not it.
        let timer_earliest = self.head_timeout.saturating_sub(HEAD_CLOCK_STEP);
        let reason = if !self.head_timeout.is_zero() && self.accepted.elapsed() >= timer_earliest {
            Reason::RequestHeadTimeout
        } else {
            Reason::ClosedBeforeRequest
        };
        reason.count(&self.metrics);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unserved_connection_counts_by_how_long_it_lasted_and_a_served_one_not_at_all() {
        let metrics = Arc::new(Metrics::default());
        let timeout = Duration::from_secs(5);
        drop(ConnectionWatch::new(metrics.clone(), timeout));
        let mut timed_out = ConnectionWatch::new(metrics.clone(), timeout);
        timed_out.accepted -= timeout - HEAD_CLOCK_STEP;
        drop(timed_out);
        let served = ConnectionWatch::new(metrics.clone(), timeout);
        served.mark_served();
        drop(served);
        assert_eq!(metrics.http_refused_total.get("closed_before_request"), 1);
        assert_eq!(metrics.http_refused_total.get("request_head_timeout"), 1);
    }
}
