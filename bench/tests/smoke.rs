//! Runs each `iris-bench` scenario with tiny parameters against the debug binaries (which
//! `cargo build` must have produced) and checks the JSON it writes: every scenario ran
//! with no errors, every frame expected arrived, a reconnect storm and a replay lost and
//! duplicated nothing, a takeover was answered. On a private Redis Cluster (`--redis-cluster`)
//! a chat reports every master's share and a replay finds its frames in the outbox through
//! the cluster. Also: a missing binary directory fails with the fix in the message.

use std::process::Command;

use iris_tests::binaries::{binary, target_dir, GATEWAY, WORKER};
use serde_json::Value;

fn extra_u64(result: &Value, key: &str) -> u64 {
    result["extra"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("extra.{key} missing in {result:#}"))
}

/// Runs `iris-bench <scenario> <args>` on the debug binaries; returns its one JSON result
/// after checking the fields every result has and that it counted no error.
fn run_scenario(scenario: &str, args: &[&str]) -> Value {
    // Each panics, saying to build first, if that debug binary is missing.
    binary(GATEWAY);
    binary(WORKER);
    let bin_dir = target_dir().join("debug");
    let json_path = std::env::temp_dir().join(format!(
        "iris-bench-smoke-{}-{scenario}.json",
        std::process::id()
    ));
    let output = Command::new(env!("CARGO_BIN_EXE_iris-bench"))
        .arg(scenario)
        .arg("--bin-dir")
        .arg(&bin_dir)
        .args(args)
        .args(["--quiet", "--json"])
        .arg(&json_path)
        .output()
        .expect("running iris-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "iris-bench {scenario} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let text = std::fs::read_to_string(&json_path).expect("the JSON file");
    let _ = std::fs::remove_file(&json_path);
    let mut results: Vec<Value> = serde_json::from_str(&text).expect("a JSON list");
    assert_eq!(results.len(), 1, "{text}");
    let result = results.remove(0);
    assert_eq!(result["system"], "iris", "{result:#}");
    assert_eq!(result["scenario"], scenario, "{result:#}");
    assert_eq!(result["errors"], 0, "{result:#}");
    for key in [
        "frames_per_s",
        "p50_ms",
        "p99_ms",
        "p999_ms",
        "cpu_s",
        "redis_ops_per_s",
    ] {
        assert!(
            result[key].as_f64().is_some_and(f64::is_finite),
            "{key} in {result:#}"
        );
    }
    result
}

#[test]
fn every_scenario_runs_small_and_reports_nothing_lost() {
    let idle = run_scenario("idle", &["--connections", "20", "--hold", "1"]);
    assert_eq!(idle["connections"], 20, "{idle:#}");
    assert!(idle["rss_per_conn_kb"].is_number(), "{idle:#}");

    let chat = run_scenario(
        "chat",
        &[
            "--accounts",
            "3",
            "--devices",
            "2",
            "--rate",
            "5",
            "--duration",
            "2",
        ],
    );
    let turns = extra_u64(&chat, "turn_ends_expected");
    assert!(turns > 0, "{chat:#}");
    assert_eq!(extra_u64(&chat, "turn_ends_seen"), turns, "{chat:#}");
    assert!(chat["p50_ms"].as_f64().unwrap() > 0.0, "{chat:#}");

    let fanout = run_scenario(
        "fanout",
        &[
            "--accounts",
            "3",
            "--devices",
            "2",
            "--rate",
            "20",
            "--duration",
            "2",
        ],
    );
    let expected = extra_u64(&fanout, "frames_expected");
    assert!(expected > 0, "{fanout:#}");
    assert_eq!(
        extra_u64(&fanout, "frames_received"),
        expected,
        "{fanout:#}"
    );
    assert!(fanout["redis_cmds_per_frame"].is_number(), "{fanout:#}");

    // Two devices per account, swapping gateways: a device's new session registers on the
    // node its account's other device just left (the presence release/hold race).
    let storm = run_scenario(
        "reconnect-storm",
        &[
            "--connections",
            "20",
            "--devices",
            "2",
            "--rate",
            "20",
            "--duration",
            "2",
        ],
    );
    assert_eq!(storm["connections"], 20, "{storm:#}");
    assert_eq!(extra_u64(&storm, "devices_back"), 20, "{storm:#}");
    assert!(extra_u64(&storm, "published") > 0, "{storm:#}");
    assert!(extra_u64(&storm, "frames_held") > 0, "{storm:#}");
    assert_eq!(extra_u64(&storm, "lost"), 0, "{storm:#}");
    assert_eq!(extra_u64(&storm, "duplicates"), 0, "{storm:#}");

    let replay = run_scenario("replay", &["--frames", "200", "--repeats", "1"]);
    assert_eq!(extra_u64(&replay, "frames_replayed"), 200, "{replay:#}");

    let takeover = run_scenario("takeover", &["--repeats", "1", "--lease-ttl-ms", "1000"]);
    let answers = takeover["extra"]["answer_ms"]
        .as_array()
        .expect("answer_ms");
    assert_eq!(answers.len(), 1, "{takeover:#}");
    assert!(
        takeover["extra"]["all_partitions_ms"][0].is_number(),
        "{takeover:#}"
    );
}

#[test]
fn on_a_redis_cluster_every_master_is_reported_and_outboxes_are_found() {
    let chat = run_scenario(
        "chat",
        &[
            "--redis-cluster",
            "3",
            "--accounts",
            "6",
            "--rate",
            "5",
            "--duration",
            "2",
        ],
    );
    let turns = extra_u64(&chat, "turn_ends_expected");
    assert!(turns > 0, "{chat:#}");
    assert_eq!(extra_u64(&chat, "turn_ends_seen"), turns, "{chat:#}");
    assert_eq!(extra_u64(&chat, "redis_shard_count"), 3, "{chat:#}");
    let shards = chat["extra"]["redis_shards"]
        .as_array()
        .expect("redis_shards");
    assert_eq!(shards.len(), 3, "{chat:#}");
    let slots: u64 = shards.iter().map(|s| s["slots"].as_u64().unwrap()).sum();
    assert_eq!(slots, 16384, "{chat:#}");
    let per_shard: f64 = shards
        .iter()
        .map(|s| s["commands_per_s"].as_f64().unwrap())
        .sum();
    let total = chat["redis_ops_per_s"].as_f64().unwrap();
    assert!((per_shard - total).abs() <= 0.01 * total + 1.0, "{chat:#}");
    for key in ["redis_spread_commands", "redis_spread_cpu"] {
        let spread = chat["extra"][key].as_f64().unwrap();
        assert!((1.0..=3.0).contains(&spread), "{key} in {chat:#}");
    }

    // One master and its replica: a cluster formed without redis-cli.
    let replay = run_scenario(
        "replay",
        &[
            "--redis-cluster",
            "1",
            "--redis-replicas",
            "1",
            "--frames",
            "100",
            "--repeats",
            "1",
        ],
    );
    assert_eq!(extra_u64(&replay, "frames_replayed"), 100, "{replay:#}");
    assert_eq!(extra_u64(&replay, "redis_shard_count"), 1, "{replay:#}");
}

#[test]
fn a_missing_binary_directory_fails_and_says_how_to_build() {
    let output = Command::new(env!("CARGO_BIN_EXE_iris-bench"))
        .args([
            "idle",
            "--bin-dir",
            "/nonexistent/iris-bench-bin",
            "--quiet",
        ])
        .output()
        .expect("running iris-bench");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("run cargo build --release"), "{stderr}");
}
