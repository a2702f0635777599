//! The dashboard and the alerts read real series: a real Prometheus scrapes a live cluster
//! (two gateways, two workers) under traffic, loads deploy/prometheus/alerts.yaml, and every
//! query of every panel and variable of deploy/grafana/iris-cluster.json, and every alert's
//! expression without its threshold and each metric selector in it, must return series. A
//! panel whose query silently returns nothing (a renamed metric, a wrong label) fails here.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{gateway_node_id, worker_node_id, ClusterSpec};
use iris_tests::frames::payload_u64;
use iris_tests::http_probe;
use iris_tests::prometheus_server::{sample_value, PrometheusServer, ScrapeTarget};

const ADMIN_KEY: &str = "admin-key-for-prometheus-queries-0123";
/// What `$__rate_interval` becomes: several scrapes, and longer than the traffic lasts.
const RATE_INTERVAL: &str = "1m";
/// Metrics the alerts use that come from outside Iris, and why a local cluster has none.
const EXTERNAL_METRICS: &[(&str, &str)] = &[(
    "kube_pod_status_ready",
    "kube-state-metrics, present only in Kubernetes",
)];

fn repo_path(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs_f64()
}

/// One query to evaluate: where it comes from and its PromQL.
struct Query {
    what: String,
    expr: String,
}

/// The dashboard's variables as Grafana fills them by default: `$job` is the "direct
/// /metrics" choice, `$node` is All.
fn variable_values(dashboard: &Value) -> Vec<(String, String)> {
    let mut values = vec![("__rate_interval".to_owned(), RATE_INTERVAL.to_owned())];
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        let name = variable["name"].as_str().expect("a variable name");
        let current = &variable["current"]["value"];
        let value = if current
            .as_array()
            .is_some_and(|all| all == &[json!("$__all")])
        {
            variable["allValue"].as_str().expect("allValue").to_owned()
        } else {
            match current.as_str() {
                Some(value) => value.to_owned(),
                None => continue, // the datasource variable, not used in expressions
            }
        };
        values.push((name.to_owned(), value));
    }
    values
}

/// `expr` with Grafana's `$name` and `${name}` replaced, longest names first.
fn substitute(expr: &str, values: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = values.iter().collect();
    sorted.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
    let mut expr = expr.to_owned();
    for (name, value) in sorted {
        expr = expr
            .replace(&format!("${{{name}}}"), value)
            .replace(&format!("${name}"), value);
    }
    expr
}

/// Every panel target (rows' nested panels included) and every query variable's selector.
fn dashboard_queries() -> Vec<Query> {
    let text = std::fs::read_to_string(repo_path("deploy/grafana/iris-cluster.json"))
        .expect("reading the dashboard");
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let values = variable_values(&dashboard);
    let mut queries = Vec::new();
    let top = dashboard["panels"].as_array().expect("panels");
    let nested = top
        .iter()
        .flat_map(|panel| panel["panels"].as_array().into_iter().flatten());
    for panel in top.iter().chain(nested) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().expect("a target's expr");
            queries.push(Query {
                what: format!("panel {:?} {}", panel["title"], target["refId"]),
                expr: substitute(expr, &values),
            });
        }
    }
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        let Some(definition) = variable["definition"].as_str() else {
            continue;
        };
        // label_values(SELECTOR, LABEL): the selector must give series carrying the label.
        let inner = definition
            .strip_prefix("label_values(")
            .and_then(|rest| rest.strip_suffix(')'))
            .expect("variables are label_values(selector, label)");
        let (selector, label) = inner.rsplit_once(',').expect("label_values has a label");
        queries.push(Query {
            what: format!("variable {}", variable["name"]),
            expr: format!(
                "count by ({}) ({})",
                label.trim(),
                substitute(selector, &values)
            ),
        });
    }
    queries
}

/// `expr` without a trailing `<op> <number>` comparison.
fn without_threshold(expr: &str) -> Option<&str> {
    let (rest, number) = expr.trim().rsplit_once(' ')?;
    number.parse::<f64>().ok()?;
    let (inner, op) = rest.trim_end().rsplit_once(' ')?;
    ["==", "!=", ">", "<", ">=", "<="]
        .contains(&op)
        .then(|| inner.trim_end())
}

/// Each metric selector in `expr`: a metric name with its `{...}` matchers if any.
fn selectors(expr: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = expr;
    while let Some(start) = ["iris_", "process_", "kube_"]
        .iter()
        .filter_map(|prefix| rest.find(prefix))
        .min()
    {
        let tail = &rest[start..];
        let name_len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let mut selector = tail[..name_len].to_owned();
        if tail[name_len..].starts_with('{') {
            let close = tail[name_len..].find('}').expect("matchers are closed");
            selector.push_str(&tail[name_len..=name_len + close]);
        }
        rest = &tail[selector.len()..];
        found.push(selector);
    }
    found
}

/// The alerting rules Prometheus loaded, as (name, query), after checking each one
/// evaluates without error and the set is the file's.
async fn loaded_alerts(prometheus: &PrometheusServer) -> Vec<(String, String)> {
    let file = std::fs::read_to_string(repo_path("deploy/prometheus/alerts.yaml"))
        .expect("reading alerts.yaml");
    let mut in_file: Vec<String> = file
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- alert: "))
        .map(str::to_owned)
        .collect();
    in_file.sort();
    let rules = prometheus.api("/api/v1/rules?type=alert").await;
    let mut loaded = Vec::new();
    for group in rules["groups"].as_array().expect("rule groups") {
        for rule in group["rules"].as_array().expect("rules") {
            let name = rule["name"].as_str().expect("a rule name").to_owned();
            assert_eq!(rule["health"], "ok", "{name} does not evaluate: {rule}");
            loaded.push((name, rule["query"].as_str().expect("a query").to_owned()));
        }
    }
    let mut names: Vec<String> = loaded.iter().map(|(name, _)| name.clone()).collect();
    names.sort();
    assert_eq!(
        names, in_file,
        "Prometheus loaded other rules than alerts.yaml's"
    );
    loaded
}

/// The alerts' queries: each expression without its threshold, and each selector in it.
/// Queries needing a metric from outside Iris are returned apart, with the reason.
fn alert_queries(alerts: &[(String, String)]) -> (Vec<Query>, Vec<String>) {
    let mut queries = Vec::new();
    let mut not_here = Vec::new();
    for (name, expr) in alerts {
        let external: Vec<&(&str, &str)> = EXTERNAL_METRICS
            .iter()
            .filter(|(metric, _)| expr.contains(metric))
            .collect();
        if let Some((metric, why)) = external.first() {
            not_here.push(format!("alert {name}: {expr} (uses {metric}: {why})"));
            continue;
        }
        let inner = without_threshold(expr)
            .unwrap_or_else(|| panic!("alert {name} does not end in a comparison: {expr}"));
        queries.push(Query {
            what: format!("alert {name} without its threshold"),
            expr: inner.to_owned(),
        });
        let found = selectors(expr);
        assert!(!found.is_empty(), "alert {name} selects no metric: {expr}");
        for selector in found {
            queries.push(Query {
                what: format!("alert {name} selector"),
                expr: format!("count({selector})"),
            });
        }
    }
    (queries, not_here)
}

/// Pairs two devices on different gateways, runs agent turns, publishes through the server
/// API, replays by sync and refuses one bad token: every series family gets values.
async fn traffic(cluster: &Cluster) {
    let token = cluster.create_token("quinn");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    let paired = tablet.pair(&token, "tablet-1").await;
    let cursor = payload_u64(&paired, "sync_cursor").expect("hello.ack has a sync_cursor");
    for turn in 0..3 {
        phone.send_message(&format!("turn {turn}")).await;
        phone.collect_turn().await;
        tablet.collect_turn().await;
    }
    let body = json!({ "text": "Nightly report ready", "key": "report-1" }).to_string();
    let published = http_probe::request(
        cluster.gateway_addr(1),
        "POST",
        "/api/v1/accounts/quinn/messages",
        Some(ADMIN_KEY),
        Some(&body),
    )
    .await
    .expect("publishing through the server API");
    assert_eq!(published.status, 202, "{published:?}");
    phone.recv_until("message").await;
    tablet.recv_until("message").await;
    // A device connecting afresh and syncing from before the turns has them replayed.
    let mut laptop = cluster.connect(1, "laptop").await;
    laptop.hello(&token, "laptop-1").await;
    let replayed = laptop.sync(cursor).await;
    assert!(replayed.len() > 3, "{replayed:#?}");
    let mut stranger = cluster.connect(1, "stranger").await;
    stranger.send_hello("not-a-token", "stranger-1").await;
    let refusal = stranger.recv().await;
    assert_eq!(refusal["payload"]["code"], "auth", "{refusal}");
    assert!(
        stranger.expect_close().await.is_some(),
        "a bad token closes"
    );
}

/// Proves that, with Prometheus scraping two gateways and two workers under traffic, every
/// dashboard panel's and variable's query and every alert's expression (threshold removed)
/// and metric selector returns at least one series with a number, and that Prometheus
/// loads and evaluates every rule of alerts.yaml. It prints each query it checked.
#[tokio::test]
async fn every_dashboard_panel_and_alert_query_returns_series_from_a_live_cluster() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .workers(2)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("prometheus-queries", spec).await;
    let mut targets = Vec::new();
    for index in 0..cluster.gateway_count() {
        targets.push(ScrapeTarget {
            job: "iris-gateway".to_owned(),
            node: gateway_node_id(index),
            addr: cluster.gateway_operator_addr(index),
        });
    }
    for index in 0..cluster.worker_count() {
        targets.push(ScrapeTarget {
            job: "iris-worker".to_owned(),
            node: worker_node_id(index),
            addr: cluster.worker_http_addr(index),
        });
    }
    let rules = repo_path("deploy/prometheus/alerts.yaml");
    let prometheus =
        PrometheusServer::start("prometheus-queries", &targets, &[rules.as_path()]).await;
    // A scrape of every node before the traffic, so rates have a sample to start from.
    prometheus
        .wait_for_scrapes_after(targets.len(), unix_now(), Duration::from_secs(30))
        .await;

    traffic(&cluster).await;
    // Two scrapes after the traffic: every series holds what it did, and a series born
    // during it (a label value's first count) has the two samples `rate()` needs.
    let done = unix_now() + 2.5;
    prometheus
        .wait_for_scrapes_after(targets.len(), done, Duration::from_secs(30))
        .await;

    let alerts = loaded_alerts(&prometheus).await;
    let (alert_checks, not_here) = alert_queries(&alerts);
    let queries: Vec<Query> = dashboard_queries()
        .into_iter()
        .chain(alert_checks)
        .collect();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for query in &queries {
        let outcome = match prometheus.query(&query.expr).await {
            Err(error) => Err(format!("error {error}")),
            Ok(series) if series.is_empty() => Err("no series".to_owned()),
            Ok(series) if series.iter().all(|s| !sample_value(s).is_finite()) => {
                Err(format!("{} series, none with a number", series.len()))
            }
            Ok(series) => Ok(format!("{} series", series.len())),
        };
        let line = match &outcome {
            Ok(found) => format!("ok    {}: {} -> {found}", query.what, query.expr),
            Err(why) => format!("EMPTY {}: {} -> {why}", query.what, query.expr),
        };
        if outcome.is_err() {
            failures.push(line.clone());
        }
        report.push(line);
    }
    for line in &not_here {
        report.push(format!("not evaluated here: {line}"));
    }
    println!("{}", report.join("\n"));
    assert!(queries.len() > 60, "only {} queries found", queries.len());
    assert!(
        failures.is_empty(),
        "queries returning nothing:\n{}\n\neverything checked:\n{}",
        failures.join("\n"),
        report.join("\n")
    );
}

#[test]
fn a_threshold_is_stripped_and_selectors_are_found() {
    let expr = "(sum(rate(iris_gateway_redis_errors_total[5m])) or vector(0)) + sum(iris_worker_turns_total{outcome=\"interrupted\"}) > 0";
    assert_eq!(
        without_threshold(expr),
        Some("(sum(rate(iris_gateway_redis_errors_total[5m])) or vector(0)) + sum(iris_worker_turns_total{outcome=\"interrupted\"})")
    );
    assert_eq!(
        selectors(expr),
        [
            "iris_gateway_redis_errors_total",
            "iris_worker_turns_total{outcome=\"interrupted\"}"
        ]
    );
    assert_eq!(without_threshold("sum(x)"), None);
}
