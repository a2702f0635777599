//! `iris-worker`: owns chats. Holds partition leases, reads the owned partitions' inbound
//! streams, and runs one actor per active chat that drives agent turns and writes frames.
//!
//! # Layout (in pipeline order)
//! - `config`: the worker's flags and environment variables.
//! - `partitions`: the leases this worker keeps (`lease_keeper`, `lease_watch`) and the
//!   reading of their inbound entries (`inbox`, `strays`).
//! - `chat`: the chat directory (`directory`) and one actor per active chat: requests,
//!   busy policy, controls of the running turn, slash commands (`commands/`).
//! - `turn`: one agent turn as protocol frames, written exactly once (`events`, `writer`,
//!   `interrupted`, `attachments`, `conversation`, `publisher`).
//! - `push`: push notifications to offline devices (the dispatcher of `iris:push:jobs`).
//! - `agent`: the upstream agent interface and its implementations.
//! - `epoch_watch`: the actor that drops chats and leases when Redis lost its data.
//! - `metrics`: the worker's Prometheus/OTLP metrics.
//! - `http`: `/healthz`, `/readyz` and `/metrics` on `IRIS_METRICS_LISTEN`.

mod agent;
mod chat;
mod config;
mod epoch_watch;
mod http;
mod metrics;
mod partitions;
mod push;
mod turn;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use anyhow::Context as _;
use clap::Parser;
use tokio::sync::watch;

use iris_shared::agent_capabilities::{self, AgentCapabilities};
use iris_shared::config::ClusterArgs;
use iris_shared::media::store::MediaStore;
use iris_shared::redis_conn::{self, RedisEndpoint};
use iris_shared::telemetry;

use crate::agent::{Agent, AgentCaps, EchoAgent, HermesAgent, OpenAiAgent, UpstreamConfig};
use crate::chat::directory::{ChatDirectory, Drain};
use crate::chat::ChatDeps;
use crate::config::{AgentKind, WorkerArgs};
use crate::epoch_watch::EpochWatch;
use crate::partitions::lease_confirmations::LeaseConfirmations;
use crate::partitions::lease_keeper::{BeginDrain, LeaseKeeper, ReleaseAll};
use crate::turn::publisher::Publisher;
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

/// Connects to the configured upstream agent (checking that it answers).
async fn build_agent(args: &WorkerArgs) -> anyhow::Result<Arc<dyn Agent>> {
    let upstream = || -> anyhow::Result<UpstreamConfig> {
        let url = args
            .agent_url
            .clone()
            .with_context(|| format!("IRIS_AGENT={} needs IRIS_AGENT_URL", args.agent_name()))?;
        Ok(UpstreamConfig {
            url,
            api_key: args.agent_api_key.clone(),
            model: args.agent_model.clone(),
        })
    };
    Ok(match args.agent {
        AgentKind::Echo => Arc::new(EchoAgent {
            delay: Duration::from_millis(args.echo_delay_ms),
        }),
        AgentKind::Hermes => Arc::new(HermesAgent::connect(upstream()?).await?),
        AgentKind::Openai => Arc::new(OpenAiAgent::connect(upstream()?).await?),
    })
}

/// Tells gateways what the upstream can do (they announce it in `hello.ack`).
/// Runs a start-up write until Redis takes it: Redis may not be up yet, or be failing over
/// (a master without its replica refuses writes for a moment). A node does not give up on
/// starting for that.
async fn until_redis_takes<F, Fut>(what: &str, mut step: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut backoff = iris_shared::backoff::Backoff::default();
    while let Err(err) = step().await {
        tracing::warn!(%err, step = what, "start-up step failed; retrying");
        backoff.wait().await;
    }
}

async fn announce_agent(
    redis: &iris_shared::redis_conn::Pool,
    name: &str,
    caps: AgentCaps,
) -> anyhow::Result<()> {
    let capabilities = AgentCapabilities {
        kind: name.to_owned(),
        tools: caps.tools,
        reasoning: caps.reasoning,
        approvals: caps.approvals,
        steer: caps.steer,
    };
    let mut conn = redis.get().await?;
    agent_capabilities::announce(&mut conn, &capabilities).await?;
    Ok(())
}

/// Orderly shutdown: stop reading, let running turns end within `grace` (or leave them
/// pending for the next owner), then release every lease and tell the other workers.
async fn drain(
    node_id: &str,
    keeper: &actix::Addr<LeaseKeeper>,
    directory: &actix::Addr<ChatDirectory>,
    grace: Duration,
) {
    tracing::info!(node = %node_id, ?grace, "shutting down: draining");
    metrics::set(&metrics::get().draining, 1);
    let _ = keeper.send(BeginDrain).await;
    let finished = directory.send(Drain { grace }).await.unwrap_or(false);
    let _ = keeper.send(ReleaseAll).await;
    tracing::info!(node = %node_id, finished, "drained: partitions released; exiting");
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let node_id = cli.cluster.node_id_or_random("wk");
    let telemetry = telemetry::init("iris-worker", &node_id, cli.cluster.log_format);
    let ran = run(cli, node_id);
    telemetry.shutdown();
    ran
}

fn run(cli: Cli, node_id: String) -> anyhow::Result<()> {
    let agent_name = cli.worker.agent_name();
    metrics::get().register(&telemetry::meter("iris-worker"));
    actix::System::new().block_on(async move {
        let agent = build_agent(&cli.worker).await?;
        let endpoint = RedisEndpoint::parse(&cli.cluster.redis_url)?;
        let redis_shown = endpoint.url().to_owned();
        let redis = redis_conn::pool(&endpoint)?;
        let media = Arc::new(
            MediaStore::open(cli.worker.media_store.as_deref())
                .context("cannot open IRIS_MEDIA_STORE")?,
        );
        let probes = http::serve(&cli.worker.metrics_listen, redis.clone())?;
        actix::spawn(probes);
        let caps = agent.caps();
        until_redis_takes("announcing the agent", || {
            announce_agent(&redis, &agent_name, caps)
        })
        .await;
        let push_settings = push::PushSettings::from_args(&cli.worker)?;
        let push_kind = push::announced_kind(push_settings.as_ref());
        until_redis_takes("announcing push", || push::announce(&redis, push_kind)).await;
        if let Some(settings) = &push_settings {
            let dispatcher =
                push::Dispatcher::new(endpoint.clone(), node_id.clone(), settings)?;
            until_redis_takes("preparing push jobs", || dispatcher.prepare()).await;
            actix::spawn(dispatcher.run());
        }
        let confirmations = LeaseConfirmations::default();
        let publisher = Publisher::new(redis.clone(), confirmations.clone());
        let default_busy_policy = cli.worker.busy_policy;
        let deps_redis = redis.clone();
        let directory = ChatDirectory::new(
            Box::new(move |directory| ChatDeps {
                turn: TurnDeps {
                    redis: deps_redis.clone(),
                    publisher: publisher.clone(),
                    agent: agent.clone(),
                    agent_name: agent_name.clone(),
                    media: media.clone(),
                },
                directory: directory.clone().recipient(),
                fenced: directory.clone().recipient(),
                default_busy_policy,
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
            redis.clone(),
            owned_tx,
            confirmations.clone(),
            directory.clone().recipient(),
        )
        .start();
        actix::spawn(partitions::lease_watch::run(endpoint.clone(), keeper.clone()));
        EpochWatch::new(redis.clone(), directory.clone(), keeper.clone()).start();
        actix::spawn(partitions::inbox::run(
            endpoint,
            node_id.clone(),
            owned_rx,
            confirmations,
            directory.clone(),
            redis,
        ));
        tracing::info!(node = %node_id, partitions = cli.cluster.partitions, agent = ?cli.worker.agent, redis = %redis_shown, "iris-worker running");
        iris_shared::shutdown::signal().await;
        drain(&node_id, &keeper, &directory, cli.worker.drain_grace()).await;
        Ok(())
    })
}
