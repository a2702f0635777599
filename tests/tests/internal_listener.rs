//! `IRIS_INTERNAL_LISTEN`: with it set, `/metrics` and the server API are served on that
//! address only (the public listener answers 404 for them), while WebSockets, the web client
//! and the probes stay public; an internal address that cannot be used stops the gateway.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use iris_shared::tokens;

use iris_tests::binaries::{binary, GATEWAY};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::payload_str;
use iris_tests::http_probe::{self, HttpResponse};
use iris_tests::ports::free_port;

const ADMIN_KEY: &str = "admin-key-for-internal-listener-tests-0123";

/// How long a gateway refusing its configuration may take to exit.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

fn spec() -> ClusterSpec {
    ClusterSpec::default()
        .internal_listener()
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_ECHO_DELAY_MS", "0")
}

async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> HttpResponse {
    http_probe::request(addr, method, path, Some(ADMIN_KEY), body)
        .await
        .unwrap_or_else(|err| panic!("{method} {path} on {addr}: {err}"))
}

/// Proves that the public listener answers 404 (actix's, no API error body) for `/metrics`
/// and for every server API route, asked with the admin key and a valid body, while the
/// internal listener answers the same requests itself: metrics text, 202 for publishes, 201
/// for a token, the token and device lists, 200 for a revocation.
#[tokio::test]
async fn the_public_port_answers_404_for_metrics_and_every_api_route() {
    let cluster = Cluster::start("internal-only-routes", spec()).await;
    let public = cluster.gateway_addr(0);
    let internal = cluster
        .gateway_internal_addr(0)
        .expect("an internal listener");
    let revoked_by_body = cluster.create_token("ida");
    let revoke_body = json!({ "token": revoked_by_body }).to_string();
    cluster.create_token("ida");
    let body_token_id = tokens::id_of(&tokens::digest(&revoked_by_body)).to_owned();
    let revoked_by_id = cluster
        .token_ids("ida")
        .into_iter()
        .find(|id| *id != body_token_id)
        .expect("a second token");
    let revoke_path = format!("/api/v1/accounts/ida/tokens/{revoked_by_id}");
    let routes: [(&str, &str, Option<&str>, u16); 8] = [
        ("GET", "/metrics", None, 200),
        (
            "POST",
            "/api/v1/accounts/ida/messages",
            Some(r#"{"text": "nightly report"}"#),
            202,
        ),
        (
            "POST",
            "/api/v1/accounts/ida/notifications",
            Some(r#"{"title": "backup finished"}"#),
            202,
        ),
        (
            "POST",
            "/api/v1/accounts/ida/tokens",
            Some(r#"{"name": "tablet"}"#),
            201,
        ),
        ("GET", "/api/v1/accounts/ida/tokens", None, 200),
        ("GET", "/api/v1/accounts/ida/devices", None, 200),
        ("DELETE", &revoke_path, None, 200),
        ("POST", "/api/v1/tokens/revoke", Some(&revoke_body), 200),
    ];
    for (method, path, body, served_status) in routes {
        let refused = call(public, method, path, body).await;
        assert_eq!(refused.status, 404, "public {method} {path}: {refused:?}");
        assert!(
            !refused.body.contains("error") && !refused.body.contains("iris_gateway_"),
            "public {method} {path} answered from the route: {refused:?}"
        );
        let served = call(internal, method, path, body).await;
        assert_eq!(
            served.status, served_status,
            "internal {method} {path}: {served:?}"
        );
    }
    let metrics = call(internal, "GET", "/metrics", None).await;
    assert!(
        metrics
            .body
            .contains("# TYPE iris_gateway_connections gauge"),
        "{}",
        metrics.body
    );
    let tokens = call(internal, "GET", "/api/v1/accounts/ida/tokens", None).await;
    assert!(tokens.body.contains("tablet"), "{tokens:?}");
}

/// Proves that a message published through the internal listener's API reaches a device
/// paired over `/ws` on the public listener, and that the harness's metric helper reads the
/// internal listener (it counts that device).
#[tokio::test]
async fn a_publish_on_the_internal_port_reaches_a_device_on_the_public_port() {
    let cluster = Cluster::start("internal-publish", spec()).await;
    let token = cluster.create_token("ivo");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let body = json!({ "text": "the build is green", "role": "cron" }).to_string();
    let accepted = cluster
        .server_api(
            0,
            "POST",
            "/api/v1/accounts/ivo/messages",
            Some(ADMIN_KEY),
            Some(&body),
        )
        .await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let message = phone.recv_until("message").await.pop().unwrap();
    assert_eq!(payload_str(&message, "text"), Some("the build is green"));
    assert_eq!(payload_str(&message, "role"), Some("cron"));
    assert_eq!(cluster.gateway_metric(0, "paired_devices").await, 1);
}

/// Proves that with an internal listener `/healthz`, `/readyz`, the web client's page and
/// files stay on the public listener (and the probes answer on the internal one too), while
/// the internal listener serves neither the web client nor WebSockets.
#[tokio::test]
async fn probes_and_the_web_client_stay_public_and_off_the_internal_port() {
    let cluster = Cluster::start("internal-public-routes", spec().workers(0)).await;
    let public = cluster.gateway_addr(0);
    let internal = cluster
        .gateway_internal_addr(0)
        .expect("an internal listener");
    for addr in [public, internal] {
        for path in ["/healthz", "/readyz"] {
            let probe = http_probe::get(addr, path).await.expect("a probe");
            assert_eq!(probe.status, 200, "{path} on {addr}: {probe:?}");
        }
    }
    for path in ["/", "/app/app.js", "/app/style.css"] {
        let served = http_probe::get(public, path).await.expect("the web client");
        assert_eq!(served.status, 200, "public {path}: {served:?}");
        assert!(!served.body.is_empty(), "public {path} is empty");
        let refused = http_probe::get(internal, path)
            .await
            .expect("the web client");
        assert_eq!(refused.status, 404, "internal {path}: {refused:?}");
    }
    let upgrade = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    let refused = http_probe::request_within(
        http_probe::PROBE_TIMEOUT,
        internal,
        "GET",
        "/ws",
        None,
        None,
        &upgrade,
    )
    .await
    .expect("an upgrade on the internal port");
    assert_eq!(refused.status, 404, "internal /ws: {refused:?}");
    let token = cluster.create_token("ines");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    assert_eq!(ack["type"], "hello.ack", "{ack}");
}

/// Starts the gateway with `IRIS_LISTEN=listen` and `IRIS_INTERNAL_LISTEN=internal` and
/// returns its exit code and stderr once it exits; panics if it is still running after
/// [`EXIT_WITHIN`] (it took the address).
fn refused_start(listen: &str, internal: &str) -> (Option<i32>, String) {
    let mut child = Command::new(binary(GATEWAY))
        .arg("serve")
        .env("IRIS_REDIS_URL", "redis://127.0.0.1:1")
        .env("IRIS_LISTEN", listen)
        .env("IRIS_INTERNAL_LISTEN", internal)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the gateway");
    let deadline = Instant::now() + EXIT_WITHIN;
    while child.try_wait().expect("polling the gateway").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("reaping the gateway");
            panic!(
                "the gateway kept running with IRIS_INTERNAL_LISTEN={internal}:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("reaping the gateway");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Proves that an `IRIS_INTERNAL_LISTEN` that is no socket address, or that is the public
/// address (the same one, or the same port on every address), makes the gateway exit
/// non-zero saying what is wrong, without panicking.
#[test]
fn an_unusable_internal_address_stops_the_gateway_with_a_clear_message() {
    let listen = format!("127.0.0.1:{}", free_port());
    let (code, stderr) = refused_start(&listen, "not-an-address");
    assert_ne!(code, Some(0), "{stderr}");
    assert!(code.is_some(), "killed by a signal: {stderr}");
    assert!(
        stderr.contains("not-an-address") && stderr.contains("internal-listen"),
        "names the flag and the value:\n{stderr}"
    );
    let port = listen.rsplit(':').next().unwrap_or_default();
    for internal in [listen.clone(), format!("0.0.0.0:{port}")] {
        let (code, stderr) = refused_start(&listen, &internal);
        assert_eq!(code, Some(1), "IRIS_INTERNAL_LISTEN={internal}: {stderr}");
        assert!(
            stderr.contains("IRIS_INTERNAL_LISTEN")
                && stderr.contains("must be another address than IRIS_LISTEN"),
            "IRIS_INTERNAL_LISTEN={internal} says why:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Proves that SIGTERM stops a gateway with an internal listener as it stops one without:
/// its device is told `status {state: restarting}` and closed with 4100, then the process
/// exits, both listeners with it.
#[tokio::test]
async fn a_gateway_with_an_internal_listener_drains_and_exits() {
    let mut cluster = Cluster::start("internal-drain", spec().workers(0)).await;
    let internal = cluster
        .gateway_internal_addr(0)
        .expect("an internal listener");
    let token = cluster.create_token("iris");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    cluster.terminate_gateway(0);
    let status = phone.recv_until("status").await.pop().unwrap();
    assert_eq!(
        payload_str(&status, "state"),
        Some("restarting"),
        "{status}"
    );
    assert_eq!(phone.expect_close().await, Some(4100));
    let deadline = Instant::now() + EXIT_WITHIN;
    while !cluster.gateway_exited(0) {
        assert!(
            Instant::now() < deadline,
            "the gateway did not exit within {EXIT_WITHIN:?} of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        http_probe::get(internal, "/healthz").await.is_err(),
        "the internal listener outlived the process"
    );
}
