//! The chat directory actor: starts one chat actor per active chat on demand, routes
//! inbound entries to it, and retires it once it has had no work for a while.
//!
//! Only the directory sends work to chat actors, and it retires an actor only when every
//! entry it sent has been reported done, so no entry is ever queued on a retiring actor
//! and a chat never has two actors.
//!
//! On drain it takes no more work (entries read meanwhile stay pending for the next owner),
//! waits a bounded grace for running turns to end, then stops every chat actor so nothing
//! more is written before the leases are released. When a partition's lease turns out to
//! be lost, its chat actors are stopped at once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::prelude::*;

use iris_shared::cluster_epoch::LostScope;
use iris_shared::inbound::{self, InboundEntry};

use iris_shared::partition::Partition;

use crate::chat::messages::{ChatKey, EntryDone, Fenced, FinishRunningTurn, Retire, Work};
use crate::chat::{ChatActor, ChatDeps};

/// How often idle chat actors are looked for.
const SWEEP_INTERVAL: Duration = Duration::from_secs(5);

/// An inbound entry read from an owned partition.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Dispatch {
    /// The entry.
    pub entry: InboundEntry,
    /// Fencing token of the partition when it was read.
    pub fence: u64,
}

/// The partitions' leases were lost: their chats must stop writing.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct PartitionsLost {
    /// The lost partitions.
    pub partitions: Vec<Partition>,
}

/// Orderly shutdown: take no more work, let running turns end within `grace`, then stop
/// every chat. Answers whether every running turn ended in time.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "bool")]
pub struct Drain {
    /// How long running turns may take.
    pub grace: Duration,
}

/// Redis lost the cluster's data: every chat actor stops, so none acts on state (fences,
/// queued entries, settings) that no longer exists. New entries start fresh actors.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct ForgetChats(pub LostScope);

/// Builds the dependencies of new chat actors (they need the directory's address).
pub type DepsFactory = Box<dyn Fn(&Addr<ChatDirectory>) -> ChatDeps>;

struct ChatSlot {
    actor: Addr<ChatActor>,
    /// The partition the chat's entries come from.
    partition: Partition,
    /// Entries sent and not yet reported done.
    in_flight: usize,
    /// When the last entry was sent or finished.
    last_active: Instant,
}

/// The worker's active chats.
pub struct ChatDirectory {
    chats: HashMap<ChatKey, ChatSlot>,
    deps: DepsFactory,
    idle_after: Duration,
    redis: iris_shared::redis_conn::Pool,
    /// Set by [`Drain`]: new entries are left pending.
    draining: bool,
}

impl ChatDirectory {
    /// A directory whose chat actors retire after `idle_after` without work.
    pub fn new(
        deps: DepsFactory,
        idle_after: Duration,
        redis: iris_shared::redis_conn::Pool,
    ) -> Self {
        Self {
            chats: HashMap::new(),
            deps,
            idle_after,
            redis,
            draining: false,
        }
    }

    /// Keeps the `chats_active` gauge equal to the actors running.
    fn count_chats(&self) {
        crate::metrics::set(&crate::metrics::get().chats_active, self.chats.len() as i64);
    }

    fn retire_idle(&mut self) {
        let idle_after = self.idle_after;
        self.chats.retain(|_, slot| {
            let idle = slot.in_flight == 0 && slot.last_active.elapsed() >= idle_after;
            if idle {
                slot.actor.do_send(Retire);
            }
            !idle
        });
        self.count_chats();
    }

    /// Acknowledges an entry that names no chat (unreadable); it can never succeed.
    fn drop_unreadable(&self, entry: InboundEntry, ctx: &mut Context<Self>) {
        tracing::warn!(partition = entry.partition, id = %entry.entry_id, "unreadable inbound entry dropped");
        let redis = self.redis.clone();
        ctx.spawn(
            async move {
                if let Ok(mut conn) = redis.get().await {
                    let _ = inbound::acknowledge(&mut conn, &[entry]).await;
                }
            }
            .into_actor(self),
        );
    }
}

impl Actor for ChatDirectory {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(SWEEP_INTERVAL, |act, _ctx| act.retire_idle());
    }
}

impl Handler<Dispatch> for ChatDirectory {
    type Result = ();

    fn handle(&mut self, msg: Dispatch, ctx: &mut Self::Context) {
        if self.draining {
            return;
        }
        let Some(request) = &msg.entry.request else {
            self.drop_unreadable(msg.entry, ctx);
            return;
        };
        let key = ChatKey {
            account: request.account.clone(),
            chat_id: request.chat_id.clone(),
        };
        let partition = msg.entry.partition;
        let slot = self.chats.entry(key.clone()).or_insert_with(|| ChatSlot {
            actor: ChatActor::new(key, (self.deps)(&ctx.address())).start(),
            partition,
            in_flight: 0,
            last_active: Instant::now(),
        });
        slot.in_flight += 1;
        slot.last_active = Instant::now();
        slot.actor.do_send(Work {
            entry: msg.entry,
            fence: msg.fence,
        });
        self.count_chats();
    }
}

impl Handler<EntryDone> for ChatDirectory {
    type Result = ();

    fn handle(&mut self, msg: EntryDone, _ctx: &mut Self::Context) {
        if let Some(slot) = self.chats.get_mut(&msg.key) {
            slot.in_flight = slot.in_flight.saturating_sub(1);
            slot.last_active = Instant::now();
        }
    }
}

impl Handler<Fenced> for ChatDirectory {
    type Result = ();

    fn handle(&mut self, msg: Fenced, _ctx: &mut Self::Context) {
        self.chats.remove(&msg.key);
        self.count_chats();
    }
}

impl Handler<ForgetChats> for ChatDirectory {
    type Result = ();

    fn handle(&mut self, ForgetChats(scope): ForgetChats, _ctx: &mut Self::Context) {
        let before = self.chats.len();
        self.chats.retain(|_, slot| {
            let lost = scope.covers_partition(slot.partition);
            if lost {
                slot.actor.do_send(Retire);
            }
            !lost
        });
        tracing::warn!(
            dropped = before - self.chats.len(),
            "dropped the chat actors of lost partitions"
        );
        self.count_chats();
    }
}

impl Handler<PartitionsLost> for ChatDirectory {
    type Result = ();

    fn handle(&mut self, msg: PartitionsLost, _ctx: &mut Self::Context) {
        self.chats.retain(|key, slot| {
            let lost = msg.partitions.contains(&slot.partition);
            if lost {
                tracing::warn!(
                    partition = slot.partition,
                    chat = %key.chat_id,
                    account = %key.account,
                    "chat stopped: its partition's lease was lost"
                );
                slot.actor.do_send(Retire);
            }
            !lost
        });
        self.count_chats();
    }
}

impl Handler<Drain> for ChatDirectory {
    type Result = ResponseActFuture<Self, bool>;

    fn handle(&mut self, msg: Drain, _ctx: &mut Self::Context) -> Self::Result {
        self.draining = true;
        let finishing: Vec<_> = self
            .chats
            .values()
            .map(|slot| slot.actor.send(FinishRunningTurn))
            .collect();
        tracing::info!(chats = finishing.len(), grace = ?msg.grace, "draining: finishing running turns");
        let wait = tokio::time::timeout(msg.grace, futures_util::future::join_all(finishing));
        Box::pin(wait.into_actor(self).then(|finished, act, _ctx| {
            let in_time = finished.is_ok();
            if !in_time {
                tracing::warn!("drain grace over: unfinished turns are left to the next owner");
            }
            let stops: Vec<_> = act
                .chats
                .drain()
                .map(|(_, slot)| slot.actor.send(Retire))
                .collect();
            async move {
                futures_util::future::join_all(stops).await;
                in_time
            }
            .into_actor(act)
        }))
    }
}
