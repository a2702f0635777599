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

/// Runs `binary serve`-style with `env` and returns (exit code, stderr) once it exits.
fn run_until_exit(binary_name: &str, env: &[(&str, String)]) -> (Option<i32>, String) {
    let mut command = std::process::Command::new(iris_tests::binaries::binary(binary_name));
    command
        .env("IRIS_REDIS_URL", "redis://127.0.0.1:1")
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .envs(env.iter().map(|(name, value)| (name, value)));
    let child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting the node");
    let output = child.wait_with_output().expect("waiting for the node");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Proves that a gateway and a worker whose HTTP port is taken exit with status 1 and
/// say which address, instead of panicking on the way out.
#[tokio::test]
async fn a_node_whose_port_is_taken_says_so_and_exits() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    let addr = taken.local_addr().expect("its address").to_string();
    for (binary_name, variable) in [
        (iris_tests::binaries::GATEWAY, "IRIS_LISTEN"),
        (iris_tests::binaries::WORKER, "IRIS_METRICS_LISTEN"),
    ] {
        let (code, stderr) = run_until_exit(binary_name, &[(variable, addr.clone())]);
        assert_eq!(
            code,
            Some(1),
            "{binary_name} exit status; stderr:\n{stderr}"
        );
        assert!(
            stderr.contains(&format!("cannot listen on {addr}")),
            "{binary_name} names the address:\n{stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "{binary_name} panicked:\n{stderr}"
        );
    }
}
