//! `iris-gateway`: serves the Iris protocol over WebSockets (`serve`, the default) and
//! manages device tokens (`token create|revoke|list`).
//!
//! # Layout
//! - `config`: the gateway's flags and environment variables.
//! - `http`: the HTTP routes.
//! - `listeners`: the public and the internal listener's sockets.
//! - `api`: the server API under `/api/v1` (publish, tokens, devices).
//! - `session`: the session actor, one per WebSocket (pairing, requests, replays).
//! - `cursor`: a device's outbox position and the exactly-once delivery rules.
//! - `registry`: the actor that maps accounts to local sessions and keeps presence.
//! - `delivery_loop`: the node's one subscription, to the live channels of its accounts.
//! - `live_subscriptions`: which accounts' channels it listens to.
//! - `backend_notice`: what sessions are told when Redis goes, comes back, or lost its data.
//! - `backend_watch`: the actor that decides whether Redis is reachable and intact
//!   (degraded status, lost-data resets).
//! - `close_codes`: the WebSocket close codes and their meaning.
//! - `metrics`: Prometheus counters.
//! - `rate_limit`: the token bucket behind the frame and `hello` rate limits.
//! - `hello_limit`: the per-IP `hello` attempt limit.
//! - `client_ip`: which address a connection counts against.
//! - `http_guard`: HTTP requests and connections refused before a session exists.
//! - `web`: the web client's page and scripts, embedded in the binary.

mod api;
mod backend_notice;
mod backend_watch;
mod backlog;
mod client_ip;
mod close_codes;
mod config;
mod cursor;
mod delivery_loop;
mod heartbeat_grid;
mod hello_limit;
mod http;
mod http_guard;
mod listeners;
mod live_subscriptions;
mod metrics;
mod presence_holds;
mod rate_limit;
mod registry;
mod send_queue;
mod session;
mod state;
mod web;

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use actix_web::{App, HttpServer};
use anyhow::Context as _;
use clap::{Parser, Subcommand};

use iris_shared::clock::now_ms;
use iris_shared::config::ClusterArgs;
use iris_shared::media::store::MediaStore;
use iris_shared::redis_conn::{self, RedisEndpoint};
use iris_shared::telemetry;
use iris_shared::tokens;

use crate::backend_watch::BackendWatch;
use crate::config::{GatewayArgs, SessionLimits};
use crate::hello_limit::HelloLimiter;
use crate::listeners::Listeners;
use crate::live_subscriptions::LiveSubscriptions;
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::state::GatewayState;

/// Iris Cluster gateway node.
#[derive(Debug, Parser)]
#[command(name = "iris-gateway", version, about)]
struct Cli {
    #[command(flatten)]
    cluster: ClusterArgs,
    #[command(flatten)]
    gateway: GatewayArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve WebSockets and HTTP (the default).
    Serve,
    /// Manage device tokens.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Create a token for an account; the token is the last line printed.
    Create {
        /// Account the token pairs devices to.
        #[arg(long)]
        account: String,
        /// Label shown by `token list`.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// Revoke a token, given in full or by its id with its account: its live sessions are
    /// closed and new connections with it are refused.
    #[command(group(clap::ArgGroup::new("revoked").required(true).args(["token", "id"])))]
    Revoke {
        /// The token, as printed by `token create`.
        token: Option<String>,
        /// The account of the token named by `--id`.
        #[arg(long, requires = "id")]
        account: Option<String>,
        /// The token's id, as `token list` shows it.
        #[arg(long, requires = "account")]
        id: Option<String>,
    },
    /// List an account's tokens (ids and labels, never the tokens).
    List {
        /// The account.
        #[arg(long)]
        account: String,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None | Some(Command::Serve) => {
            let node_id: Arc<str> = cli.cluster.node_id_or_random("gw").into();
            let telemetry = telemetry::init("iris-gateway", &node_id, cli.cluster.log_format);
            let served = serve(cli.cluster, cli.gateway, node_id);
            telemetry.shutdown();
            served
        }
        Some(Command::Token(command)) => {
            telemetry::init_logging();
            run_token_command(&cli.cluster.redis_url, command)
        }
    }
}

fn run_token_command(redis_url: &str, command: TokenCommand) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let endpoint = RedisEndpoint::parse(redis_url).context("invalid IRIS_REDIS_URL")?;
        let mut conn = endpoint
            .connect(Some(redis_conn::COMMAND_TIMEOUT))
            .await
            .with_context(|| format!("cannot connect to Redis at {}", endpoint.url()))?;
        match command {
            TokenCommand::Create { account, name } => {
                let token = tokens::create(&mut conn, &account, &name).await?;
                println!("created a device token for account {account}");
                println!("{token}");
            }
            TokenCommand::Revoke { token, account, id } => match (token, account, id) {
                (Some(token), _, _) => {
                    match tokens::revoke_and_disconnect(&mut conn, &token).await? {
                        Some(account) => println!("revoked a token of account {account}"),
                        None => anyhow::bail!("no such token"),
                    }
                }
                (None, Some(account), Some(id)) => {
                    if !tokens::revoke_by_id_and_disconnect(&mut conn, &account, &id).await? {
                        anyhow::bail!("no token with id {id} in account {account}");
                    }
                    println!("revoked token {id} of account {account}");
                }
                _ => anyhow::bail!("give a token, or both --account and --id"),
            },
            TokenCommand::List { account } => {
                let listed = tokens::list(&mut conn, &account).await?;
                println!("{:<14} {:<15} name", "id", "created_ms");
                for token in listed {
                    println!("{:<14} {:<15} {}", token.id, token.created_ms, token.name);
                }
            }
        }
        Ok(())
    })
}

/// How long a draining node answers `/readyz` with 503 before closing its sessions.
const DRAIN_NOTICE: std::time::Duration = std::time::Duration::from_millis(500);

/// Seconds the HTTP server waits for connections to finish after a drain.
const SHUTDOWN_GRACE_SECS: u64 = 5;

/// On SIGTERM or SIGINT: tell every session to reconnect elsewhere, then stop serving (every
/// listener).
async fn drain_on_signal(
    servers: Vec<actix_web::dev::ServerHandle>,
    registry: actix::Addr<Registry>,
    draining: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
) {
    iris_shared::shutdown::signal().await;
    draining.store(true, std::sync::atomic::Ordering::Relaxed);
    metrics::set(&metrics.draining, 1);
    // Let load balancers see `/readyz` fail before sessions are told to move.
    tokio::time::sleep(DRAIN_NOTICE).await;
    let drained = registry.send(registry::Drain).await.unwrap_or(0);
    tracing::info!(sessions = drained, "draining: sessions told to reconnect");
    for server in servers {
        server.stop(true).await;
    }
}

/// The internal listener's server: `/metrics`, the server API and the probes. One worker
/// thread: it serves scrapes and operators, not devices.
fn internal_server(
    listener: std::net::TcpListener,
    data: actix_web::web::Data<GatewayState>,
) -> anyhow::Result<actix_web::dev::Server> {
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .wrap(actix_web::middleware::from_fn(http_guard::screen))
            .configure(http::internal_routes)
    })
    .workers(1)
    .listen(listener)
    .context("cannot serve IRIS_INTERNAL_LISTEN")?
    .disable_signals()
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    .run();
    Ok(server)
}

fn serve(cluster: ClusterArgs, gateway: GatewayArgs, node_id: Arc<str>) -> anyhow::Result<()> {
    // Bound before any actor starts: a taken port is reported as that, and nothing half-started
    // is torn down.
    let listeners = Listeners::bind(&gateway)?;
    actix_web::rt::System::new().block_on(async move {
        let endpoint = RedisEndpoint::parse(&cluster.redis_url)?;
        let redis_shown = endpoint.url().to_owned();
        let redis = redis_conn::pool(&endpoint)?;
        let media = MediaStore::open(gateway.media_store.as_deref())
            .context("cannot open the media store (IRIS_MEDIA_STORE)")?;
        tracing::info!(store = media.url(), "media store");
        let metrics: Arc<Metrics> = Arc::default();
        metrics.register(&telemetry::meter("iris-gateway"));
        let (live, live_changes) = LiveSubscriptions::new();
        let registry = Registry::new(
            node_id.clone(),
            redis.clone(),
            gateway.send_queue_limits(),
            metrics.clone(),
            live,
        )
        .start();
        let state = GatewayState {
            node_id: node_id.clone(),
            partitions: cluster.partitions,
            redis,
            registry: registry.clone(),
            metrics,
            hello_limiter: Arc::new(HelloLimiter::new(
                gateway.hello_rate,
                gateway.hello_burst,
                hello_limit::MAX_TRACKED_ADDRESSES,
            )),
            upgrade_limiter: Arc::new(http_guard::UpgradeLimiter::new(
                gateway.upgrade_rate,
                gateway.upgrade_burst,
            )),
            limits: SessionLimits::from(&gateway),
            delivery_beat: Arc::new(AtomicU64::new(0)),
            delivery_reading: Arc::new(AtomicBool::new(false)),
            degraded: Arc::new(AtomicBool::new(false)),
            draining: Arc::new(AtomicBool::new(false)),
            admin_key: gateway.admin_key.clone().filter(|key| !key.is_blank()),
            media,
        };
        let registry_for_drain = registry.clone();
        actix_web::rt::spawn(delivery_loop::run(
            endpoint,
            state.clone(),
            registry,
            live_changes,
        ));
        BackendWatch::new(state.clone()).start();
        let draining = state.draining.clone();
        let metrics_for_drain = state.metrics.clone();
        let data = actix_web::web::Data::new(state);
        let unacked_limit = Duration::from_millis(gateway.client_timeout_ms);
        // With an internal listener, the public one serves neither `/metrics` nor the API.
        let public_routes = match listeners.internal {
            Some(_) => http::public_routes,
            None => http::routes,
        };
        let internal = listeners
            .internal
            .map(|listener| internal_server(listener, data.clone()))
            .transpose()?;
        let head_timeout = Duration::from_millis(gateway.request_head_timeout_ms);
        let watch_metrics = data.metrics.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .wrap(actix_web::middleware::from_fn(http_guard::screen))
                .configure(public_routes)
        })
        .on_connect(move |connection, extensions| {
            http::tune_connection(connection, unacked_limit);
            let watch = http_guard::ConnectionWatch::new(watch_metrics.clone(), head_timeout);
            extensions.insert(watch);
        })
        .client_request_timeout(head_timeout)
        // A turn's frames come in quick succession: without TCP_NODELAY each one written
        // while the previous is unacknowledged waits for the device's delayed ACK (40 ms).
        .tcp_nodelay(true)
        .listen(listeners.public)
        .with_context(|| format!("cannot listen on {}", gateway.listen))?
        .disable_signals()
        .shutdown_timeout(SHUTDOWN_GRACE_SECS)
        .run();
        let internal_listen = match gateway.internal_listen {
            Some(addr) => addr.to_string(),
            None => "off (IRIS_LISTEN serves /metrics and /api/v1)".to_owned(),
        };
        tracing::info!(node = %node_id, listen = %gateway.listen, internal_listen = %internal_listen, redis = %redis_shown, started_ms = now_ms(), "iris-gateway serving");
        let handles = std::iter::once(server.handle())
            .chain(internal.as_ref().map(|s| s.handle()))
            .collect();
        actix_web::rt::spawn(drain_on_signal(
            handles,
            registry_for_drain,
            draining,
            metrics_for_drain,
        ));
        // Both servers run only while polled: the internal one beside the public one.
        match internal {
            Some(internal) => {
                futures_util::try_join!(server, internal)?;
            }
            None => server.await?,
        }
        tracing::info!(node = %node_id, "iris-gateway stopped");
        Ok(())
    })
}
