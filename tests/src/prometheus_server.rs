//! A private Prometheus server per test (Debian's `prometheus`, installed by
//! scripts/install-deps.sh): it scrapes the given nodes' `/metrics` every second, loads the
//! given rule files, and answers PromQL over its HTTP API.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child_process::ChildProcess;
use crate::http_probe;
use crate::ports::free_port;
use crate::scratch_dir::ScratchDir;

/// How often it scrapes and evaluates rules.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// One node to scrape: its job (the dashboard's `job` variable matches it) and `node` label.
#[derive(Debug, Clone)]
pub struct ScrapeTarget {
    /// The scrape job, e.g. `iris-gateway`.
    pub job: String,
    /// The node id, given to every series as label `node`.
    pub node: String,
    /// Where its `/metrics` is served.
    pub addr: SocketAddr,
}

/// A running Prometheus; killed when dropped.
#[derive(Debug)]
pub struct PrometheusServer {
    addr: SocketAddr,
    _process: ChildProcess,
    _scratch: ScratchDir,
}

/// The configuration file: one job per distinct `job`, one static target per node.
fn config(targets: &[ScrapeTarget], rule_files: &[&Path]) -> String {
    let interval = format!("{}s", SCRAPE_INTERVAL.as_secs());
    let mut text = format!(
        "global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\n  evaluation_interval: {interval}\nrule_files:\n"
    );
    for file in rule_files {
        text.push_str(&format!("  - {:?}\n", file.display().to_string()));
    }
    text.push_str("scrape_configs:\n");
    let mut jobs: Vec<&str> = targets.iter().map(|t| t.job.as_str()).collect();
    jobs.sort_unstable();
    jobs.dedup();
    for job in jobs {
        text.push_str(&format!("  - job_name: {job:?}\n    static_configs:\n"));
        for target in targets.iter().filter(|t| t.job == job) {
            text.push_str(&format!(
                "      - targets: [{:?}]\n        labels: {{node: {:?}}}\n",
                target.addr.to_string(),
                target.node
            ));
        }
    }
    text
}

/// Bytes outside RFC 3986's unreserved set, percent-encoded (for a query string).
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

impl PrometheusServer {
    /// Starts Prometheus scraping `targets` with `rule_files` and waits until it is ready.
    pub async fn start(label: &str, targets: &[ScrapeTarget], rule_files: &[&Path]) -> Self {
        let scratch = ScratchDir::new(&format!("{label}-prometheus"));
        let config_path = scratch.path().join("prometheus.yml");
        std::fs::write(&config_path, config(targets, rule_files)).expect("writing prometheus.yml");
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = Command::new("prometheus");
        command
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"));
        let process = ChildProcess::spawn("prometheus", command, scratch.path());
        http_probe::wait_for_status(addr, "/-/ready", 200, Duration::from_secs(30)).await;
        Self {
            addr,
            _process: process,
            _scratch: scratch,
        }
    }

    /// `GET path` of the HTTP API: its `data`; panics unless the status is `success`.
    pub async fn api(&self, path: &str) -> Value {
        let response = http_probe::request_within(
            Duration::from_secs(10),
            self.addr,
            "GET",
            path,
            None,
            None,
            &[],
        )
        .await
        .unwrap_or_else(|err| panic!("GET {path} on Prometheus: {err}"));
        let answer: Value = serde_json::from_str(&response.body)
            .unwrap_or_else(|_| panic!("GET {path}: not JSON: {response:?}"));
        assert_eq!(answer["status"], "success", "GET {path}: {answer}");
        answer["data"].clone()
    }

    /// The instant vector `expr` evaluates to now, or the error Prometheus gave for it.
    pub async fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/query?query={}", percent_encode(expr));
        let response = http_probe::request_within(
            Duration::from_secs(10),
            self.addr,
            "GET",
            &path,
            None,
            None,
            &[],
        )
        .await
        .map_err(|err| err.to_string())?;
        let answer: Value =
            serde_json::from_str(&response.body).map_err(|_| format!("not JSON: {response:?}"))?;
        if answer["status"] != "success" {
            return Err(format!("{}: {}", answer["errorType"], answer["error"]));
        }
        match answer["data"]["resultType"].as_str() {
            Some("vector") => Ok(answer["data"]["result"]
                .as_array()
                .cloned()
                .unwrap_or_default()),
            other => Err(format!("result type {other:?}, not a vector")),
        }
    }

    /// Waits until every target was scraped successfully at or after `since` (Unix seconds):
    /// then series reflect everything that happened before `since`.
    pub async fn wait_for_scrapes_after(&self, targets: usize, since: f64, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let fresh = self
                .query(&format!("timestamp(up == 1) >= {since}"))
                .await
                .map(|series| series.len())
                .unwrap_or(0);
            if fresh >= targets {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "only {fresh} of {targets} targets scraped after {since}: {:?}",
                self.api("/api/v1/targets").await
            );
            tokio::time::sleep(SCRAPE_INTERVAL / 4).await;
        }
    }
}

/// The value of one sample of an instant vector (`NaN` and infinities included).
pub fn sample_value(series: &Value) -> f64 {
    series["value"][1]
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_percent_encoded_whole() {
        assert_eq!(
            percent_encode("sum(x{a=~\"b|c\"}[5m]) > 0.1"),
            "sum%28x%7Ba%3D~%22b%7Cc%22%7D%5B5m%5D%29%20%3E%200.1"
        );
    }
}
