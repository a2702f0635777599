//! The backend watch actor: decides whether this node can reach Redis, and whether the
//! Redis it reaches still holds the data it held before.
//!
//! Every tick it checks the cluster epoch (one `SET NX GET`, which doubles as a ping) and
//! looks at the delivery loop. Failing for longer than [`DEGRADED_AFTER`] makes the node
//! degraded: `/readyz` fails, new `hello`s are refused, and every session is told
//! `status {state: degraded}` once. The first good tick after that makes it online again.
//! An epoch that is missing or changed means Redis lost data: the sessions of the accounts
//! whose state was there (every account on one Redis; one shard's on a Cluster) are told to
//! reset (see `session/backend_state.rs`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix::prelude::*;

use iris_shared::clock::now_ms;
use iris_shared::cluster_epoch::{EpochKeeper, LostScope};

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
    /// The epochs this node last saw (taken out while a check runs).
    epochs: Option<EpochKeeper>,
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
            epochs: Some(EpochKeeper::default()),
            failing_since: None,
            probing: false,
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        let Some(mut epochs) = self.epochs.take() else {
            return;
        };
        self.probing = true;
        let redis = self.state.redis.clone();
        let probe = async move {
            let check = async {
                let mut conn = redis.get().await.map_err(|err| err.to_string())?;
                epochs
                    .check(&mut conn, now_ms())
                    .await
                    .map_err(|err| err.to_string())
            };
            let result = tokio::time::timeout(PROBE_TIMEOUT, check)
                .await
                .unwrap_or_else(|_| Err("Redis did not answer in time".to_owned()));
            (epochs, result)
        };
        ctx.spawn(probe.into_actor(self).map(|(epochs, result), act, _ctx| {
            act.probing = false;
            act.epochs = Some(epochs);
            act.on_probe(result);
        }));
    }

    fn on_probe(&mut self, result: Result<Option<LostScope>, String>) {
        let delivery_ok = self.state.delivery_alive(now_ms());
        let lost = match result {
            Ok(None) if delivery_ok => None,
            Ok(Some(scope)) => {
                tracing::error!(
                    ?scope,
                    "an epoch changed: Redis lost data; the devices of the accounts there are \
                     told to reset"
                );
                metrics::incr(&self.state.metrics.epoch_changes_total);
                Some(scope)
            }
            Ok(None) => return self.on_failure("delivery loop not reading"),
            Err(err) => return self.on_failure(&err),
        };
        self.failing_since = None;
        let was_degraded = self.state.degraded.swap(false, Ordering::Relaxed);
        if was_degraded {
            tracing::info!("Redis reachable again: node online");
            metrics::shift(&self.state.metrics.degraded, -1);
        }
        if let Some(scope) = lost {
            self.state.registry.do_send(BackendNotice::DataLost(scope));
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
        metrics::incr(&self.state.metrics.degradations_total);
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
