//! The epoch watch actor: notices when Redis lost data (an epoch is missing or changed, see
//! `iris_shared::cluster_epoch`) and makes the worker drop what it derived from the lost
//! data: the chat actors and leases of the partitions whose keys were there (every one on
//! one Redis; one shard's on a Cluster).

use std::time::Duration;

use actix::prelude::*;

use iris_shared::clock::now_ms;
use iris_shared::cluster_epoch::{self, EpochKeeper};
use iris_shared::redis_conn::Pool;

use crate::chat::directory::{ChatDirectory, ForgetChats};
use crate::partitions::lease_keeper::{ForgetLeases, LeaseKeeper};

/// Watches the cluster epoch for one worker.
pub struct EpochWatch {
    redis: Pool,
    directory: Addr<ChatDirectory>,
    keeper: Addr<LeaseKeeper>,
    /// The epochs this worker last saw (taken out while a check runs).
    epochs: Option<EpochKeeper>,
}

impl EpochWatch {
    /// A watch that resets `directory` and `keeper` when the epoch changes.
    pub fn new(redis: Pool, directory: Addr<ChatDirectory>, keeper: Addr<LeaseKeeper>) -> Self {
        Self {
            redis,
            directory,
            keeper,
            epochs: Some(EpochKeeper::default()),
        }
    }

    fn check(&mut self, ctx: &mut Context<Self>) {
        let Some(mut epochs) = self.epochs.take() else {
            return;
        };
        let redis = self.redis.clone();
        let check = async move {
            let result = async {
                let mut conn = redis.get().await.map_err(|err| err.to_string())?;
                epochs
                    .check(&mut conn, now_ms())
                    .await
                    .map_err(|err| err.to_string())
            }
            .await;
            (epochs, result)
        };
        ctx.spawn(check.into_actor(self).map(|(epochs, result), act, _ctx| {
            act.epochs = Some(epochs);
            match result {
                Ok(None) => {}
                Ok(Some(scope)) => {
                    tracing::error!(
                        ?scope,
                        "an epoch changed: Redis lost data; dropping the chats and leases there"
                    );
                    crate::metrics::incr(&crate::metrics::get().epoch_changes_total);
                    act.directory.do_send(ForgetChats(scope.clone()));
                    act.keeper.do_send(ForgetLeases(scope));
                }
                // Redis unreachable: the loops reconnect with backoff; check again later.
                Err(err) => tracing::debug!(%err, "epoch check failed"),
            }
        }));
    }
}

impl Actor for EpochWatch {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.check(ctx);
        ctx.run_interval(
            Duration::from_millis(cluster_epoch::CHECK_INTERVAL_MS),
            Self::check,
        );
    }
}
