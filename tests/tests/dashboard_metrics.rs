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
