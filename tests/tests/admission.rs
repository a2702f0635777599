//! Who may open a WebSocket: browsers only from allowed origins, and no more connections
//! than a node's cap.

use std::net::SocketAddr;

use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Error as WsError;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;

/// The HTTP status of a WebSocket upgrade to `addr` with `origin`, or 101 if it opened.
async fn upgrade_status(addr: SocketAddr, origin: Option<&str>) -> u16 {
    let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("Origin", HeaderValue::from_str(origin).unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok(_) => 101,
        Err(WsError::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("upgrade failed: {other}"),
    }
}

/// Proves that with `IRIS_ALLOWED_ORIGINS` set, a browser from an allowed origin connects,
/// one from another origin gets 403, and an app (no `Origin` header) connects.
#[tokio::test]
async fn only_allowed_browser_origins_may_connect() {
    let spec = ClusterSpec::default().workers(0).gateway_env(
        "IRIS_ALLOWED_ORIGINS",
        "https://app.example.com, http://localhost:5173",
    );
    let cluster = Cluster::start("admission-origins", spec).await;
    let addr = cluster.gateway_addr(0);
    assert_eq!(
        upgrade_status(addr, Some("https://app.example.com")).await,
        101
    );
    assert_eq!(
        upgrade_status(addr, Some("http://localhost:5173")).await,
        101
    );
    assert_eq!(
        upgrade_status(addr, Some("https://evil.example.net")).await,
        403
    );
    assert_eq!(upgrade_status(addr, None).await, 101);
}

/// Proves that a node at `IRIS_MAX_CONNECTIONS` refuses further upgrades with 503 (so a
/// load balancer tries another node) and accepts again once a connection closes.
#[tokio::test]
async fn a_node_at_its_connection_cap_refuses_more_until_one_closes() {
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MAX_CONNECTIONS", "2");
    let cluster = Cluster::start("admission-cap", spec).await;
    let first = cluster.connect(0, "first").await;
    let _second = cluster.connect(0, "second").await;
    assert_eq!(upgrade_status(cluster.gateway_addr(0), None).await, 503);
    first.close().await;
    let mut status = 0;
    for _ in 0..50 {
        status = upgrade_status(cluster.gateway_addr(0), None).await;
        if status == 101 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, 101, "a freed slot was not reused");
}
