//! The scenarios: [`run`] prepares one scenario's cluster (a [`Bench`]), runs it with its
//! progress line and hands back its result.

mod chat;
mod fanout;
mod idle;
mod reconnect_storm;
mod replay;
mod takeover;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use crate::bench::Bench;
use crate::cluster::SpawnSpec;
use crate::options::{Options, ScenarioName};
use crate::progress::Progress;
use crate::report::ScenarioResult;

/// Runs one scenario on a cluster of its own.
pub async fn run(name: ScenarioName, options: &Options) -> Result<ScenarioResult> {
    let started = Instant::now();
    let spec = SpawnSpec {
        // Idle measures memory per connection on one gateway.
        gateways: if name == ScenarioName::Idle {
            1
        } else {
            options.gateways.max(1)
        },
        workers: if name == ScenarioName::Takeover {
            options.workers.max(2)
        } else {
            options.workers.max(1)
        },
        // Only the takeover measures the lease TTL; the others run the nodes' default.
        worker_env: if name == ScenarioName::Takeover {
            vec![("IRIS_LEASE_TTL_MS", options.lease_ttl_ms.to_string())]
        } else {
            vec![(
                "IRIS_ECHO_DELAY_MS",
                options.agent_delay_ms(name).to_string(),
            )]
        },
    };
    if name == ScenarioName::Takeover {
        return takeover::run(options, spec).await;
    }
    let mut bench = Bench::prepare(options, spec).await?;
    let progress = Progress::start(name.label(), Arc::clone(&bench.stats), options.quiet);
    let outcome = match name {
        ScenarioName::Idle => idle::run(&bench).await,
        ScenarioName::Chat => chat::run(&bench, chat::Shape::Chat).await,
        ScenarioName::Busy => chat::run(&bench, chat::Shape::Busy).await,
        ScenarioName::Fanout => fanout::run(&bench).await,
        ScenarioName::ReconnectStorm => reconnect_storm::run(&bench).await,
        ScenarioName::Replay => replay::run(&bench).await,
        ScenarioName::Takeover | ScenarioName::All => unreachable!("handled above"),
    };
    drop(progress);
    bench.cluster.check_alive()?;
    let mut result = outcome?;
    result.put("scenario_s", started.elapsed().as_secs_f64().into());
    if result.errors == 0 {
        bench.cluster.discard_logs();
    }
    Ok(result)
}
