//! The gateway's operational HTTP endpoints: readiness tracks Redis, liveness does not,
//! and metrics are Prometheus text.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::http_probe;

/// How long the gateway may take to notice that Redis is gone.
const NOTICE_WITHIN: Duration = Duration::from_secs(10);

/// Polls `/readyz` until it answers `status`; panics after [`NOTICE_WITHIN`].
async fn wait_for_readyz(addr: SocketAddr, status: u16) {
    let deadline = Instant::now() + NOTICE_WITHIN;
    let mut last = None;
    while Instant::now() < deadline {
        match http_probe::get(addr, "/readyz").await {
            Ok(response) if response.status == status => return,
            other => last = Some(other),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("/readyz never answered {status} within {NOTICE_WITHIN:?}; last: {last:?}");
}

/// Proves that `/readyz` answers 200 while Redis is up and 503 within a few seconds of
/// Redis being killed, while `/healthz` keeps answering 200.
#[tokio::test]
async fn readyz_reports_ready_with_redis_and_not_ready_without() {
    let mut cluster = Cluster::start("readyz", ClusterSpec::default().workers(0)).await;
    let addr = cluster.gateway_addr(0);
    wait_for_readyz(addr, 200).await;

    cluster.kill_redis();
    wait_for_readyz(addr, 503).await;
    let health = http_probe::get(addr, "/healthz")
        .await
        .expect("GET /healthz");
    assert_eq!(health.status, 200, "{health:?}");
}

/// Proves that `/metrics` answers 200 with Prometheus text that includes the
/// `iris_gateway_connections` gauge.
#[tokio::test]
async fn metrics_endpoint_serves_prometheus_text() {
    let cluster = Cluster::start("metrics", ClusterSpec::default().workers(0)).await;
    let metrics = http_probe::get(cluster.gateway_addr(0), "/metrics")
        .await
        .expect("GET /metrics");
    assert_eq!(metrics.status, 200, "{metrics:?}");
    assert!(
        metrics
            .body
            .contains("# TYPE iris_gateway_connections gauge"),
        "{}",
        metrics.body
    );
    assert!(
        metrics
            .body
            .lines()
            .any(|line| line.starts_with("iris_gateway_connections ")),
        "{}",
        metrics.body
    );
}
