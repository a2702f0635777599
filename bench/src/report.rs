//! A scenario's result: the table printed on stdout and the JSON objects written with
//! `--json` (the format another tool compares with other systems; keep it stable: the
//! per-shard figures of a Redis Cluster go into `extra`).

use std::path::Path;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::shard_costs::ShardWindow;

/// What one scenario measured.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    pub scenario: &'static str,
    pub connections: u64,
    pub frames_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub errors: u64,
    pub rss_per_conn_kb: Option<f64>,
    pub cpu_s: f64,
    pub redis_ops_per_s: f64,
    pub redis_cmds_per_frame: Option<f64>,
    /// Each master's commands and CPU, on a Redis Cluster (`extra.redis_shards`).
    pub redis_shards: Option<ShardWindow>,
    /// Scenario-specific figures.
    pub extra: Map<String, Value>,
}

/// p50, p99 and p99.9 of a µs histogram, in ms (0 when it is empty).
pub fn quantiles_ms(histogram: &Histogram<u64>) -> (f64, f64, f64) {
    if histogram.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let at = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
    (at(0.5), at(0.99), at(0.999))
}

/// Rounds to 3 decimals, for readable JSON.
pub fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

impl ScenarioResult {
    /// A result named `scenario` with every figure zero.
    pub fn new(scenario: &'static str) -> Self {
        Self {
            scenario,
            connections: 0,
            frames_per_s: 0.0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            p999_ms: 0.0,
            errors: 0,
            rss_per_conn_kb: None,
            cpu_s: 0.0,
            redis_ops_per_s: 0.0,
            redis_cmds_per_frame: None,
            redis_shards: None,
            extra: Map::new(),
        }
    }

    /// Sets p50/p99/p999 from `histogram` (and its sample count as `extra.latency_samples`).
    pub fn latencies(&mut self, histogram: &Histogram<u64>) {
        (self.p50_ms, self.p99_ms, self.p999_ms) = quantiles_ms(histogram);
        self.put("latency_samples", json!(histogram.len()));
    }

    /// Adds a scenario-specific figure.
    pub fn put(&mut self, key: &str, value: Value) {
        let value = match value.as_f64() {
            Some(number) if value.is_f64() => json!(round3(number)),
            _ => value,
        };
        self.extra.insert(key.to_owned(), value);
    }

    /// The JSON object of this result.
    pub fn to_json(&self) -> Value {
        let mut extra = self.extra.clone();
        if let Some(shards) = &self.redis_shards {
            extra.insert("redis_shards".to_owned(), shards.to_json());
        }
        json!({
            "system": "iris",
            "scenario": self.scenario,
            "connections": self.connections,
            "frames_per_s": round3(self.frames_per_s),
            "p50_ms": round3(self.p50_ms),
            "p99_ms": round3(self.p99_ms),
            "p999_ms": round3(self.p999_ms),
            "errors": self.errors,
            "rss_per_conn_kb": self.rss_per_conn_kb.map(round3),
            "cpu_s": round3(self.cpu_s),
            "redis_ops_per_s": round3(self.redis_ops_per_s),
            "redis_cmds_per_frame": self.redis_cmds_per_frame.map(round3),
            "extra": Value::Object(extra),
        })
    }
}

/// Prints the results as a table, each scenario's extra figures below it.
pub fn print_table(results: &[ScenarioResult]) {
    let header = [
        "scenario",
        "connections",
        "frames/s",
        "p50 ms",
        "p99 ms",
        "p999 ms",
        "errors",
        "RSS/conn KB",
        "CPU s",
        "Redis ops/s",
        "Redis cmds/frame",
    ];
    let optional = |v: Option<f64>, decimals: usize| {
        v.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
    };
    let rows: Vec<[String; 11]> = results
        .iter()
        .map(|r| {
            [
                r.scenario.to_owned(),
                r.connections.to_string(),
                format!("{:.0}", r.frames_per_s),
                format!("{:.2}", r.p50_ms),
                format!("{:.2}", r.p99_ms),
                format!("{:.2}", r.p999_ms),
                r.errors.to_string(),
                optional(r.rss_per_conn_kb, 1),
                format!("{:.2}", r.cpu_s),
                format!("{:.0}", r.redis_ops_per_s),
                optional(r.redis_cmds_per_frame, 2),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].len())
                .chain([header[column].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                if i == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    println!("{}", line(header.to_vec()));
    for row in &rows {
        println!("{}", line(row.iter().map(String::as_str).collect()));
    }
    for result in results {
        let extras: Vec<String> = result
            .extra
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        println!("  {}: {}", result.scenario, extras.join(" "));
        if let Some(shards) = &result.redis_shards {
            for line in shards.table() {
                println!("{line}");
            }
        }
    }
}

/// Writes `results` to `path` as a JSON list.
pub fn write_json(path: &Path, results: &[ScenarioResult]) -> Result<()> {
    let list = Value::Array(results.iter().map(ScenarioResult::to_json).collect());
    let text = serde_json::to_string_pretty(&list)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}
