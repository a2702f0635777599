//! The dashboard, the alerts and the collector config name metrics by hand
//! (deploy/grafana/metrics.txt lists them; scripts/check-deploy.sh holds the dashboard
//! and alerts to that list). This test holds the list to the binaries.

use std::collections::BTreeSet;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;

/// Metric names declared by `# TYPE` lines of a Prometheus text page.
fn declared(page: &str) -> BTreeSet<String> {
    page.lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Proves that deploy/grafana/metrics.txt names exactly the metrics the gateway's and the
/// worker's `/metrics` pages declare: nothing the dashboard shows is missing from the
/// binaries, and nothing the binaries expose is left out of the list.
#[tokio::test]
async fn the_dashboards_metric_list_is_exactly_what_gateways_and_workers_expose() {
    let listed_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/grafana/metrics.txt");
    let listed: BTreeSet<String> = std::fs::read_to_string(listed_path)
        .expect("reading deploy/grafana/metrics.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();

    let cluster = Cluster::start("dashboard-metrics", ClusterSpec::default()).await;
    let mut exposed = declared(&cluster.gateway_metrics_text(0).await);
    exposed.extend(declared(&cluster.worker_metrics_text(0).await));

    let missing: Vec<&String> = listed.difference(&exposed).collect();
    let unlisted: Vec<&String> = exposed.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "listed for the dashboard but not exposed: {missing:?}"
    );
    assert!(
        unlisted.is_empty(),
        "exposed but missing from metrics.txt: {unlisted:?}"
    );
}

/// The commit the binaries were built from, as `shared/build.rs` finds it.
fn built_commit() -> String {
    if let Ok(commit) = std::env::var("IRIS_BUILD_COMMIT") {
        if !commit.trim().is_empty() {
            return commit.trim().to_owned();
        }
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Proves that both node kinds expose `iris_build_info` with the workspace's version and
/// the commit they were built from, so a dashboard can tell builds apart during a rollout.
#[tokio::test]
async fn both_node_kinds_name_their_version_and_commit_in_build_info() {
    let cluster = Cluster::start("build-info", ClusterSpec::default()).await;
    let series = format!(
        "iris_build_info{{version=\"{}\",commit=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        built_commit()
    );
    let gateway = cluster.gateway_metrics_text(0).await;
    let worker = cluster.worker_metrics_text(0).await;
    assert!(
        gateway.lines().any(|line| line == series),
        "{series} not in:\n{gateway}"
    );
    assert!(
        worker.lines().any(|line| line == series),
        "{series} not in:\n{worker}"
    );
}
