//! The chaos suite: devices of several accounts keep talking to the echo agent while
//! gateways are killed (-9) and drained, workers are killed mid-turn, drained and paused
//! past their lease, Redis (AOF, fsync always) is killed and restarted, and listening devices
//! stall into slow consumers. At the end every device's received seqs are checked against
//! its account's outbox, and the counts are printed: lost, duplicated and reordered frames
//! must all be 0, and every acknowledged message must have its answer (or an interrupted
//! ending). A second run does the same through Sentinel failovers. `IRIS_CHAOS_SECS` sets how long faults are injected (`scripts/chaos.sh` runs it
//! longer).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};

use iris_tests::chaos::device::{run_device, DeviceControls, DeviceSpec};
use iris_tests::chaos::faults::{inject, Fault};
use iris_tests::chaos::ledger::{
    count_device, count_turns, read_outbox, ChaosReport, DeviceCounts, TurnCounts,
};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};

/// Accounts in the run, each with one talking and one listening device.
const ACCOUNTS: usize = 3;
/// Pause between two faults.
const BETWEEN_FAULTS: Duration = Duration::from_millis(1_500);

fn chaos_duration() -> Duration {
    let secs = std::env::var("IRIS_CHAOS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    Duration::from_secs(secs)
}

/// Runs the devices through `faults` (cycled, for `duration`) on a cluster whose Redis is
/// `redis`, and counts what every device received against the outbox.
async fn run_chaos(
    label: &str,
    redis: RedisKind,
    faults: &[Fault],
    duration: Duration,
) -> ChaosReport {
    let spec = ClusterSpec::default()
        .redis(redis)
        .gateways(3)
        .workers(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "5")
        .gateway_env("IRIS_SEND_QUEUE_BYTES", "65536")
        .gateway_env("IRIS_SLOW_CONSUMER_MS", "1500");
    let mut cluster = Cluster::start(label, spec).await;
    let gateways: Vec<_> = (0..cluster.gateway_count())
        .map(|i| cluster.gateway_addr(i))
        .collect();

    // Talkers stop first; listeners do their final sync only once every turn has ended.
    let mut talkers = Vec::new();
    let mut listeners = Vec::new();
    let mut listener_controls = Vec::new();
    for a in 0..ACCOUNTS {
        let account = format!("chaos{a}");
        let token = cluster.create_token(&account);
        for (role, talker) in [("talker", true), ("listener", false)] {
            let spec = DeviceSpec {
                account: account.clone(),
                device_id: format!("{account}-{role}"),
                token: token.clone(),
                talker,
                gateways: gateways[a % gateways.len()..]
                    .iter()
                    .chain(&gateways[..a % gateways.len()])
                    .copied()
                    .collect(),
                recv_buffer: (!talker).then_some(4096),
                padding: 3_000,
            };
            let controls = Arc::new(DeviceControls::default());
            let task = tokio::spawn(run_device(spec, controls.clone()));
            if talker {
                talkers.push((controls, task));
            } else {
                listener_controls.push(controls.clone());
                listeners.push((controls, task));
            }
        }
    }

    let seed: u64 = std::env::var("IRIS_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    println!("{label}: seed {seed} (IRIS_CHAOS_SEED), {duration:?} of faults");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let deadline = Instant::now() + duration;
    let mut injected: HashMap<Fault, usize> = HashMap::new();
    let mut round = 0;
    while Instant::now() < deadline || round < faults.len() {
        let fault = faults[round % faults.len()];
        inject(
            &mut cluster,
            fault,
            rng.random_range(0..64),
            &listener_controls,
        )
        .await;
        *injected.entry(fault).or_default() += 1;
        round += 1;
        tokio::time::sleep(BETWEEN_FAULTS).await;
    }
    cluster.wait_workers_serving().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut logs = Vec::new();
    for devices in [talkers, listeners] {
        for (controls, _) in &devices {
            controls.stop.store(true, Ordering::Relaxed);
        }
        for (_, task) in devices {
            let log = tokio::time::timeout(Duration::from_secs(120), task)
                .await
                .expect("a device finished within 2 minutes")
                .expect("a device task did not panic");
            logs.push(log);
        }
    }

    let mut report = ChaosReport {
        faults: faults
            .iter()
            .map(|f| (f.name().to_owned(), injected.get(f).copied().unwrap_or(0)))
            .collect(),
        ..ChaosReport::default()
    };
    let mut turns = TurnCounts::default();
    for a in 0..ACCOUNTS {
        let account = format!("chaos{a}");
        let outbox = read_outbox(&cluster, &account);
        for log in logs.iter().filter(|l| l.account == account) {
            report.devices.push(count_device(log, &outbox));
            if !log.sent.is_empty() {
                turns.add(&count_turns(&log.sent, &outbox));
            }
        }
    }
    report.turns = turns;
    report.breaks = logs.iter().map(|l| l.breaks).sum();
    for code in logs.iter().flat_map(|l| &l.close_codes) {
        let name = code.map_or("none".to_owned(), |c| c.to_string());
        *report.close_codes.entry(name).or_default() += 1;
    }
    report.unacknowledged = logs.iter().map(|l| l.unacknowledged).sum();
    report.refused = logs.iter().map(|l| l.refused).sum();
    report.stuck_turns = logs.iter().map(|l| l.stuck_turns).sum();
    for stuck in logs.iter().flat_map(|l| &l.stuck) {
        println!("stuck turn: {stuck}");
    }
    report.recovery_ms = logs.iter().flat_map(|l| l.recovery_ms.clone()).collect();
    report.recovery_ms.sort_unstable();
    println!("{}", report.render());
    report
}

/// One per-device count of the report.
type DeviceCounter = fn(&DeviceCounts) -> usize;

/// Fails the test unless nothing was lost, repeated, reordered or misdelivered, every
/// acknowledged message got its answer or an interrupted ending, and nothing hung.
fn assert_nothing_lost(report: &ChaosReport) {
    let must_be_zero: [(&str, DeviceCounter); 4] = [
        ("lost frames", |d| d.lost),
        ("duplicates", |d| d.duplicated),
        ("reorderings", |d| d.reordered),
        ("foreign frames", |d| d.foreign),
    ];
    for (what, counter) in must_be_zero {
        assert_eq!(report.total(counter), 0, "{what}\n{}", report.render());
    }
    let t = &report.turns;
    assert!(
        t.acknowledged > 0,
        "no message got through\n{}",
        report.render()
    );
    assert!(
        t.unanswered <= t.interrupted,
        "acknowledged messages without an answer or an interrupted ending\n{}",
        report.render()
    );
    assert_eq!(
        t.answered_twice,
        0,
        "answers written twice\n{}",
        report.render()
    );
    assert_eq!(
        report.stuck_turns,
        0,
        "turns left hanging\n{}",
        report.render()
    );
    assert!(
        report.breaks > 0,
        "the faults broke no connection\n{}",
        report.render()
    );
}

/// Proves that under repeated kill -9 and drain of gateways, kill -9, drain and SIGSTOP of
/// workers mid-turn, kill -9 and restart of Redis (AOF, fsync always) and devices stalling
/// into slow consumers, no device loses, repeats or reorders a single outboxed frame, none
/// receives a frame that is not its own, and every acknowledged message is answered once
/// (or visibly interrupted), with no turn left hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_lose_duplicate_and_reorder_no_outboxed_frame() {
    let report = run_chaos("chaos", RedisKind::Durable, &Fault::ALL, chaos_duration()).await;
    assert_nothing_lost(&report);
}

/// Proves the same on a six-node Redis Cluster through kill -9 of masters (each replica
/// promoted, the old master back as a replica) and live reshards, mixed with gateway and
/// worker kills and slow devices; explicit resets (a failover that lost an outbox's tail)
/// are counted apart and never hide a lost, repeated or foreign frame after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_master_kills_and_reshards_lose_duplicate_and_reorder_no_outboxed_frame() {
    let duration = chaos_duration() * 2 / 3;
    let report = run_chaos(
        "chaos-redis-cluster",
        RedisKind::Cluster,
        &Fault::WITH_CLUSTER,
        duration,
    )
    .await;
    assert_nothing_lost(&report);
}

/// Proves the same through repeated Sentinel failovers of Redis (master and replica swap
/// roles), mixed with gateway and worker kills and slow devices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_failovers_lose_duplicate_and_reorder_no_outboxed_frame() {
    let duration = chaos_duration() * 2 / 3;
    let report = run_chaos(
        "chaos-sentinel",
        RedisKind::SentinelEveryMasterGuarded,
        &Fault::WITH_SENTINEL,
        duration,
    )
    .await;
    assert_nothing_lost(&report);
}
