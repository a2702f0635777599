//! The backend watch actor: decides whether this node can reach Redis, and whether the
//! Redis it reaches still holds the data it held before.
//!
//! Every tick it checks the cluster epoch (one `SET NX GET`, which doubles as a ping) and
//! looks at the delivery loop. Failing for longer than [`DEGRADED_AFTER`] makes the node
//! degraded: `/readyz` fails, new `hello`s are refused, and every session is told
//! `status {state: degraded}` once. The first good tick after that makes it online again.
//! An epoch that is missing or changed means Redis lost the cluster's data: sessions are
//! told to reset (see `session/backend_state.rs`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix::prelude::*;

use iris_shared::clock::now_ms;
use iris_shared::cluster_epoch::{self, EpochCheck};

use crate::backend_notice::BackendNotice;
use crate::metrics;
use crate::state::GatewayState;

/// How often Redis and the delivery loop are checked.
const TICK: Duration = Duration::from_millis(500);
/// Longest one check may take before it counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_millis(1_500);
/// How long Redis must be failing before the node counts as degraded (a blip is not).
pub const DEGRADED_AFTER: Duration = Duration::from_millis(1_500);

/// Watches Redis for one gateway node.
pub struct BackendWatch {
    state: GatewayState,
    /// The epoch this node last saw.
    epoch: Option<String>,
    /// Since when checks have been failing.
    failing_since: Option<Instant>,
    /// A check is in flight (ticks do not pile up behind a slow Redis).
    probing: bool,
}

impl BackendWatch {
    /// A watch over `state`'s Redis; it reports to `state.registry`.
    pub fn new(state: GatewayState) -> Self {
        Self {
            state,
            epoch: None,
            failing_since: None,
            probing: false,
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.probing {
            return;
        }
        self.probing = true;
        let redis = self.state.redis.clone();
        let known = self.epoch.clone();
        let probe = async move {
            let check = async {
                let mut conn = redis.get().await.map_err(|err| err.to_string())?;
                cluster_epoch::check(&mut conn, known.as_deref(), now_ms())
                    .await
                    .map_err(|err| err.to_string())
            };
            tokio::time::timeout(PROBE_TIMEOUT, check)
                .await
                .unwrap_or_else(|_| Err("Redis did not answer in time".to_owned()))
        };
        ctx.spawn(probe.into_actor(self).map(|result, act, _ctx| {
            act.probing = false;
            act.on_probe(result);
        }));
    }

    fn on_probe(&mut self, result: Result<EpochCheck, String>) {
        let delivery_ok = self.state.delivery_alive(now_ms());
        let lost = match result {
            Ok(EpochCheck::Unchanged(epoch)) if delivery_ok => {
                self.epoch = Some(epoch);
                false
            }
            Ok(EpochCheck::Lost { was, now }) => {
                tracing::error!(
                    %was, %now,
                    "the cluster epoch changed: Redis lost its data; devices are told to reset"
                );
                metrics::incr(&self.state.metrics.epoch_changes_total);
                self.epoch = Some(now);
                true
            }
            Ok(EpochCheck::Unchanged(epoch)) => {
                self.epoch = Some(epoch);
                return self.on_failure("delivery loop not reading");
            }
            Err(err) => return self.on_failure(&err),
        };
        self.failing_since = None;
        let was_degraded = self.state.degraded.swap(false, Ordering::Relaxed);
        if was_degraded {
            tracing::info!("Redis reachable again: node online");
            metrics::shift(&self.state.metrics.degraded, -1);
        }
        if lost {
            self.state.registry.do_send(BackendNotice::DataLost);
        } else if was_degraded {
            self.state.registry.do_send(BackendNotice::Online);
        }
    }

    fn on_failure(&mut self, why: &str) {
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        if since.elapsed() < DEGRADED_AFTER || self.state.is_degraded() {
            return;
        }
        tracing::warn!(%why, "Redis unreachable: node degraded");
        self.state.degraded.store(true, Ordering::Relaxed);
        metrics::shift(&self.state.metrics.degraded, 1);
        metrics::incr(&self.state.metrics.degraded_total);
        self.state.registry.do_send(BackendNotice::Degraded);
    }
}

impl Actor for BackendWatch {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.tick(ctx);
        ctx.run_interval(TICK, Self::tick);
    }
}
