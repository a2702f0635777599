//! `takeover`: two workers; the one owning a chat (its partition's lease holder in Redis)
//! is killed with SIGKILL, and at once a `message.send` goes to that chat. Measures kill →
//! the send answered (its `message` echo, written by the new owner: the main latency),
//! kill → `message.stop`, and kill → the survivors own every partition (their
//! `iris_worker_partitions_owned`). A fresh cluster per `--repeats` round; spawn mode only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use iris_shared::partition::partition_of;
use iris_shared::protocol::DEFAULT_CHAT_ID;

use crate::bench::Bench;
use crate::client::Connection;
use crate::cluster::SpawnSpec;
use crate::cost_window::CostDelta;
use crate::devices::{open_devices, Accounts};
use crate::frame_head::{stamped_text, FrameHead};
use crate::live_stats::latency_histogram;
use crate::options::Options;
use crate::progress::Progress;
use crate::report::ScenarioResult;

/// How long the leases may take to spread over both workers before the kill.
const BALANCE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the chat may stay unanswered after the kill.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// One round's times after the kill.
struct Round {
    answer: Duration,
    stop: Duration,
    all_partitions: Option<Duration>,
    cost: CostDelta,
}

pub async fn run(options: &Options, spec: SpawnSpec) -> Result<ScenarioResult> {
    if options.existing_cluster() {
        bail!("takeover kills a worker with SIGKILL: it runs only on a cluster the bench spawns");
    }
    let mut answers = latency_histogram();
    let mut rounds = Vec::new();
    let mut errors = 0;
    let mut first_errors = Vec::new();
    for round in 0..options.repeats.max(1) {
        let mut bench = Bench::prepare(options, spec.clone()).await?;
        let progress = Progress::start("takeover", Arc::clone(&bench.stats), options.quiet);
        let outcome = one_round(&mut bench).await;
        drop(progress);
        match outcome {
            Ok(done) => {
                answers.saturating_record(done.answer.as_micros() as u64);
                rounds.push(done);
            }
            Err(err) => bench.stats.error(format!("round {round}: {err:#}")),
        }
        errors += bench.stats.error_count();
        first_errors.extend(bench.stats.first_errors());
        if bench.stats.error_count() == 0 {
            bench.cluster.discard_logs();
        }
    }

    let mut result = ScenarioResult::new("takeover");
    result.connections = 1;
    result.latencies(&answers);
    let ms = |d: Duration| (d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
    if let Some(first) = rounds.first() {
        let mut cost = first.cost.clone();
        for round in &rounds[1..] {
            cost.add(&round.cost);
        }
        Bench::fill_costs(&mut result, &cost, 0);
    }
    result.put(
        "latency_is",
        "kill -9 of the chat's worker -> message.send answered".into(),
    );
    result.put("lease_ttl_ms", options.lease_ttl_ms.into());
    result.put("target_ms", 2000.0.into());
    result.put(
        "answer_ms",
        rounds
            .iter()
            .map(|r| ms(r.answer))
            .collect::<Vec<_>>()
            .into(),
    );
    result.put(
        "stop_ms",
        rounds.iter().map(|r| ms(r.stop)).collect::<Vec<_>>().into(),
    );
    result.put(
        "all_partitions_ms",
        rounds
            .iter()
            .map(|r| r.all_partitions.map(ms))
            .collect::<Vec<_>>()
            .into(),
    );
    result.errors = errors;
    if !first_errors.is_empty() {
        first_errors.truncate(5);
        result.put("first_errors", first_errors.into());
    }
    Ok(result)
}

async fn one_round(bench: &mut Bench) -> Result<Round> {
    let stats = Arc::clone(&bench.stats);
    let http = bench.api.http().clone();
    let partitions = bench.cluster.partitions;
    stats.set_phase("balancing");
    let deadline = Instant::now() + BALANCE_TIMEOUT;
    loop {
        let owned = bench.cluster.partitions_owned(&http).await;
        let balanced = owned.iter().all(|o| o.is_some_and(|n| n > 0.0))
            && owned.iter().flatten().sum::<f64>() == f64::from(partitions);
        if balanced {
            break;
        }
        if Instant::now() > deadline {
            bail!("leases not spread over the workers within {BALANCE_TIMEOUT:?}: {owned:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    stats.set_phase("warming");
    let accounts = Accounts::create(bench, "takeover", 1).await?;
    let mut device = open_devices(bench, &accounts, 1, 1, |_, _| 0)
        .await
        .pop()
        .context("the device did not pair")?;
    let warm_id = device.connection.send_message("warm-up").await?;
    wait_for(&mut device.connection, "message.stop", None).await?;
    let _ = warm_id;

    let partition = partition_of(&accounts.names[0], DEFAULT_CHAT_ID, partitions);
    let owner = bench
        .redis()?
        .lease_holder(partition)
        .await?
        .context("the chat's partition has no lease holder")?;
    let owner_index = bench
        .cluster
        .worker_node_ids
        .iter()
        .position(|id| *id == owner)
        .with_context(|| format!("lease holder {owner} is not a worker of this cluster"))?;

    stats.set_phase("killed");
    let before = bench.snapshot().await;
    bench.cluster.kill_worker(owner_index)?;
    let killed_at = Instant::now();
    let id = device
        .connection
        .send_message(&stamped_text(stats.now_us()))
        .await?;
    let cluster = &bench.cluster;
    let answered = async {
        wait_for(&mut device.connection, "message", Some(id)).await?;
        let answer = killed_at.elapsed();
        wait_for(&mut device.connection, "message.stop", None).await?;
        anyhow::Ok((answer, killed_at.elapsed()))
    };
    let taken_over = async {
        while killed_at.elapsed() < ANSWER_TIMEOUT {
            let owned: f64 = cluster.partitions_owned(&http).await.iter().flatten().sum();
            if owned == f64::from(partitions) {
                return Some(killed_at.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    };
    let (answered, all_partitions) = tokio::join!(answered, taken_over);
    let (answer, stop) = answered?;
    stats.record_latency_us(answer.as_micros() as u64);
    let after = bench.snapshot().await;
    if all_partitions.is_none() {
        stats.error("the survivors never owned every partition");
    }
    Ok(Round {
        answer,
        stop,
        all_partitions,
        cost: CostDelta::between(&before, &after),
    })
}

/// Reads until a frame of `kind` (with request `id`, if given) arrives.
async fn wait_for(connection: &mut Connection, kind: &str, id: Option<u64>) -> Result<()> {
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let text = connection.next_text(left).await?;
        let Some(head) = FrameHead::parse(&text) else {
            continue;
        };
        if head.kind == "error" {
            bail!("error while waiting for {kind}: {text}");
        }
        if head.kind == kind && (id.is_none() || head.id == id) {
            return Ok(());
        }
    }
}
