//! `iris-worker`: owns chats. Holds partition leases, reads the owned partitions' inbound
//! streams, and runs one actor per active chat that drives agent turns and writes frames.
//!
//! # Layout
//! - `config`: the worker's flags and environment variables.
//! - `lease_keeper`: the actor that keeps this worker's fair share of partition leases.
//! - `inbox`: the one blocking read over owned partitions; takeover of pending entries.
//! - `directory`: the actor that starts, routes to and retires chat actors.
//! - `chat`: the chat actor, one per active chat.
//! - `turn`: one agent turn as protocol frames, written exactly once.
//! - `publisher`: outbox append plus live delivery of one frame.
//! - `agent`: the upstream agent interface and its implementations.

mod agent;
mod chat;
mod commands;
mod config;
mod conversation;
mod directory;
mod inbox;
mod lease_keeper;
mod publisher;
mod turn;
mod turn_events;
mod turn_writer;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use clap::Parser;
use tokio::sync::watch;

use iris_shared::config::ClusterArgs;
use iris_shared::{redis_conn, telemetry};

use crate::agent::{Agent, EchoAgent};
use crate::chat::ChatDeps;
use crate::config::{AgentKind, WorkerArgs};
use crate::directory::ChatDirectory;
use crate::lease_keeper::{LeaseKeeper, ReleaseAll};
use crate::publisher::Publisher;
use crate::turn::TurnDeps;

/// Iris Cluster worker node.
#[derive(Debug, Parser)]
#[command(name = "iris-worker", version, about)]
struct Cli {
    #[command(flatten)]
    cluster: ClusterArgs,
    #[command(flatten)]
    worker: WorkerArgs,
}

fn build_agent(args: &WorkerArgs) -> anyhow::Result<Arc<dyn Agent>> {
    match args.agent {
        AgentKind::Echo => Ok(Arc::new(EchoAgent {
            delay: Duration::from_millis(args.echo_delay_ms),
        })),
        other => anyhow::bail!(
            "IRIS_AGENT={} is not available in this build; use IRIS_AGENT=echo",
            format!("{other:?}").to_lowercase()
        ),
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init_logging();
    let agent = build_agent(&cli.worker)?;
    let agent_name = format!("{:?}", cli.worker.agent).to_lowercase();
    let node_id = cli.cluster.node_id_or_random("wk");
    actix::System::new().block_on(async move {
        let redis = redis_conn::pool(&cli.cluster.redis_url)?;
        let publisher = Publisher::new(redis.clone());
        let deps_redis = redis.clone();
        let directory = ChatDirectory::new(
            Box::new(move |directory| ChatDeps {
                turn: TurnDeps {
                    redis: deps_redis.clone(),
                    publisher: publisher.clone(),
                    agent: agent.clone(),
                    agent_name: agent_name.clone(),
                },
                directory: directory.clone().recipient(),
                fenced: directory.clone().recipient(),
            }),
            Duration::from_secs(cli.worker.chat_idle_secs),
            redis.clone(),
        )
        .start();
        let (owned_tx, owned_rx) = watch::channel(HashMap::new());
        let keeper = LeaseKeeper::new(
            node_id.clone(),
            cli.cluster.partitions,
            cli.worker.lease_ttl(),
            redis,
            owned_tx,
        )
        .start();
        actix::spawn(inbox::run(
            cli.cluster.redis_url.clone(),
            node_id.clone(),
            owned_rx,
            directory,
        ));
        tracing::info!(node = %node_id, partitions = cli.cluster.partitions, agent = ?cli.worker.agent, "iris-worker running");
        iris_shared::shutdown::signal().await;
        tracing::info!(node = %node_id, "shutting down: releasing partitions");
        let _ = keeper.send(ReleaseAll).await;
        Ok(())
    })
}
