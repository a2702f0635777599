//! The epoch watch actor: notices when Redis lost the cluster's data (the cluster epoch is
//! missing or changed, see `iris_shared::cluster_epoch`) and makes the worker drop what it
//! derived from the old data: its chat actors and its partition leases.

use std::time::Duration;

use actix::prelude::*;

use iris_shared::clock::now_ms;
use iris_shared::cluster_epoch::{self, EpochCheck};
use iris_shared::redis_conn::Pool;

use crate::chat::directory::{ChatDirectory, ForgetChats};
use crate::partitions::lease_keeper::{ForgetLeases, LeaseKeeper};

/// Watches the cluster epoch for one worker.
pub struct EpochWatch {
    redis: Pool,
    directory: Addr<ChatDirectory>,
    keeper: Addr<LeaseKeeper>,
    /// The epoch this worker last saw.
    epoch: Option<String>,
    /// A check is in flight.
    checking: bool,
}

impl EpochWatch {
    /// A watch that resets `directory` and `keeper` when the epoch changes.
    pub fn new(redis: Pool, directory: Addr<ChatDirectory>, keeper: Addr<LeaseKeeper>) -> Self {
        Self {
            redis,
            directory,
            keeper,
            epoch: None,
            checking: false,
        }
    }

    fn check(&mut self, ctx: &mut Context<Self>) {
        if self.checking {
            return;
        }
        self.checking = true;
        let redis = self.redis.clone();
        let known = self.epoch.clone();
        let check = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            cluster_epoch::check(&mut conn, known.as_deref(), now_ms())
                .await
                .map_err(|err| err.to_string())
        };
        ctx.spawn(check.into_actor(self).map(|result, act, _ctx| {
            act.checking = false;
            match result {
                Ok(EpochCheck::Unchanged(epoch)) => act.epoch = Some(epoch),
                Ok(EpochCheck::Lost { was, now }) => {
                    tracing::error!(
                        %was, %now,
                        "the cluster epoch changed: Redis lost its data; dropping chats and leases"
                    );
                    act.epoch = Some(now);
                    crate::metrics::incr(&crate::metrics::get().epoch_changes_total);
                    act.directory.do_send(ForgetChats);
                    act.keeper.do_send(ForgetLeases);
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
