//! Hostile HTTP, before any WebSocket exists: oversized headers, a slowloris head, an
//! upgrade flood from one address, bad `Sec-WebSocket-Key`s, a wrong `Origin`, a body on
//! `GET /ws` and path traversal on the web client's files. Each is refused with the status
//! docs/reliability.md gives, counted under its reason in
//! `iris_gateway_http_refused_total`, and while it goes on a well-behaved device on the
//! same node pairs and gets its `pong`.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, type_of};
use iris_tests::raw_http::{self, exchange, exchange_from, upgrade_head, RawAnswer};

/// The gateway's request-head timeout in the slowloris test (ms).
const HEAD_TIMEOUT_MS: u64 = 3_000;
/// The documented defaults of `IRIS_UPGRADE_BURST` and `IRIS_UPGRADE_RATE`.
const DEFAULT_UPGRADE_BURST: usize = 500;
const DEFAULT_UPGRADE_RATE: f64 = 50.0;
/// actix-http's own limit on a request head it buffers (its `MAX_BUFFER_SIZE`).
const ACTIX_HEAD_BUFFER: usize = 131_072;
/// A second client address: Linux routes all of 127/8 to the loopback.
const OTHER_CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A cluster of one gateway and no worker (pairing and `ping` need none).
async fn gateway_only(label: &str, spec: ClusterSpec) -> Cluster {
    Cluster::start(label, spec.workers(0)).await
}

/// The count of `reason` in `iris_gateway_http_refused_total` on gateway 0 (0 before the
/// first one).
async fn refused(cluster: &Cluster, reason: &str) -> usize {
    let text = cluster.gateway_metrics_text(0).await;
    let series = format!("iris_gateway_http_refused_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(series.as_str()))
        .map_or(0, |value| value.trim().parse().expect("a count"))
}

/// Waits until `reason` has been counted `expected` times (a connection is counted when
/// the gateway has dropped it, just after the client sees it close), and not more.
async fn assert_refused_count(cluster: &Cluster, reason: &str, expected: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut counted = refused(cluster, reason).await;
    while counted < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        counted = refused(cluster, reason).await;
    }
    let text = cluster.gateway_metrics_text(0).await;
    let every_reason: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("iris_gateway_http_refused_total{"))
        .collect();
    assert_eq!(
        counted, expected,
        "refusals counted as {reason}; all counted: {every_reason:?}"
    );
}

/// A device pairs on gateway 0 and its `ping` gets a `pong`: the node serves everyone else.
async fn device_is_served(cluster: &Cluster, token: &str, label: &str) {
    let mut phone = cluster.connect(0, label).await;
    phone.pair(token, label).await;
    let id = phone.request("ping", None, json!({ "ts": 1 })).await;
    let pong = phone.recv().await;
    assert_eq!(
        type_of(&pong),
        "pong",
        "[{label}] ping answered with {pong}"
    );
    assert_eq!(id_of(&pong), Some(id), "[{label}] pong for another request");
}

/// Runs `attempt` from `parallel` loops at once until a device has been served meanwhile
/// and at least `min_attempts` were made; returns every attempt's result and how long the
/// attack lasted.
async fn attack_while_a_device_is_served<T, F, Fut>(
    cluster: &Cluster,
    parallel: usize,
    min_attempts: usize,
    attempt: F,
) -> (Vec<T>, Duration)
where
    T: Send + 'static,
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = T> + Send,
{
    let token = cluster.create_token("honest");
    let served = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicUsize::new(0));
    let began = Instant::now();
    let loops: Vec<_> = (0..parallel)
        .map(|_| {
            let (served, started, attempt) = (served.clone(), started.clone(), attempt.clone());
            tokio::spawn(async move {
                let mut results = Vec::new();
                loop {
                    let made = started.fetch_add(1, Ordering::SeqCst);
                    if served.load(Ordering::SeqCst) && made >= min_attempts {
                        return results;
                    }
                    results.push(attempt().await);
                }
            })
        })
        .collect();
    // The device starts once the attack is under way.
    while started.load(Ordering::SeqCst) < parallel {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    device_is_served(cluster, &token, "honest-phone").await;
    served.store(true, Ordering::SeqCst);
    let mut results = Vec::new();
    for attack in loops {
        results.extend(attack.await.expect("an attack loop"));
    }
    (results, began.elapsed())
}

/// Asserts every answer is `status` and the gateway closed each connection after it.
fn assert_all_refused(answers: &[std::io::Result<RawAnswer>], status: u16, what: &str) {
    for answer in answers {
        let answer = answer
            .as_ref()
            .unwrap_or_else(|err| panic!("{what}: no answer: {err}"));
        assert_eq!(answer.status, status, "{what}: {answer:?}");
        assert!(
            answer.closed,
            "{what}: the connection stayed open after {status}"
        );
    }
}

/// Proves that an upgrade carrying 64 KiB of headers (over `IRIS_MAX_HEADER_BYTES`, under
/// actix-http's own buffer) gets 431 and a closed connection, counted as
/// `header_too_large`; that a head as large as actix-http's buffer gets actix-http's own
/// 431, counted as `closed_before_request`; and that a device pairs meanwhile.
#[tokio::test]
async fn oversized_request_headers_get_431_and_a_closed_connection() {
    let cluster = gateway_only("hostile-headers", ClusterSpec::default()).await;
    let addr = cluster.gateway_addr(0);
    let filler: String = (0..64)
        .map(|index| format!("X-Filler-{index}: {}\r\n", "a".repeat(1_010)))
        .collect();
    let oversized = upgrade_head(addr, &filler);
    assert!(oversized.len() > 64 * 1024 && oversized.len() < ACTIX_HEAD_BUFFER);
    let (answers, _) = attack_while_a_device_is_served(&cluster, 4, 20, move || {
        let request = oversized.clone();
        async move { exchange(addr, request.as_bytes()).await }
    })
    .await;
    assert_all_refused(&answers, 431, "64 KiB of headers");
    assert_refused_count(&cluster, "header_too_large", answers.len()).await;

    // A head that never ends, exactly as long as actix-http buffers: it answers itself.
    let mut endless = upgrade_head(addr, "").trim_end().to_owned();
    endless.push_str("\r\nX-Endless: ");
    endless.push_str(&"b".repeat(ACTIX_HEAD_BUFFER - endless.len()));
    let at_buffer = exchange(addr, endless.as_bytes()).await;
    assert_all_refused(&[at_buffer], 431, "a head as long as actix-http's buffer");
    assert_refused_count(&cluster, "closed_before_request", 1).await;
}

/// Proves that 200 connections sending an upgrade head one byte a second are all closed
/// once `IRIS_REQUEST_HEAD_TIMEOUT_MS` has passed (408 or a plain close), each counted as
/// `request_head_timeout`, and that a device pairs while all of them are open.
#[tokio::test]
async fn slowloris_heads_are_closed_after_the_request_head_timeout() {
    let spec = ClusterSpec::default()
        .gateway_env("IRIS_REQUEST_HEAD_TIMEOUT_MS", &HEAD_TIMEOUT_MS.to_string());
    let cluster = gateway_only("hostile-slowloris", spec).await;
    let addr = cluster.gateway_addr(0);
    let token = cluster.create_token("honest");
    let closed = Arc::new(AtomicUsize::new(0));
    let mut slow = Vec::new();
    for _ in 0..200 {
        let stream = raw_http::connect_from(None, addr).await.expect("connect");
        let closed = closed.clone();
        slow.push(tokio::spawn(drip_head(stream, addr, closed)));
    }
    device_is_served(&cluster, &token, "honest-phone").await;
    assert_eq!(
        closed.load(Ordering::SeqCst),
        0,
        "a slow connection was closed before the device was served: not concurrent"
    );
    for connection in slow {
        let (lasted, answer) = connection.await.expect("a slow connection");
        let timeout = Duration::from_millis(HEAD_TIMEOUT_MS);
        assert!(
            // actix-http's clock advances in 500 ms steps.
            lasted >= timeout - Duration::from_millis(500) && lasted < timeout * 2,
            "a slow head was closed after {lasted:?}, the timeout is {timeout:?}"
        );
        assert!(
            answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"),
            "a slow head got {:?}",
            String::from_utf8_lossy(&answer)
        );
    }
    assert_refused_count(&cluster, "request_head_timeout", 200).await;
}

/// Writes an upgrade head on `stream` one byte a second, never finishing it; returns how
/// long the connection lasted and what the gateway sent before closing it.
async fn drip_head(
    mut stream: tokio::net::TcpStream,
    addr: SocketAddr,
    closed: Arc<AtomicUsize>,
) -> (Duration, Vec<u8>) {
    let opened = Instant::now();
    let head = upgrade_head(addr, "");
    let mut received = Vec::new();
    for byte in head.as_bytes().iter().cycle() {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
        let mut chunk = [0u8; 256];
        match tokio::time::timeout(Duration::from_secs(1), stream.readable()).await {
            Err(_) => continue,
            Ok(_) => match stream.try_read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            },
        }
    }
    closed.fetch_add(1, Ordering::SeqCst);
    (opened.elapsed(), received)
}

/// Proves that upgrades flooding in from one address (with the default limits) are
/// answered 101 up to the burst and the refill, and 429 past them, each 429 counted as
/// `upgrade_rate`, while a device from another address pairs.
#[tokio::test]
async fn an_upgrade_flood_from_one_address_gets_429_past_its_budget() {
    let cluster = gateway_only("hostile-flood", ClusterSpec::default()).await;
    let addr = cluster.gateway_addr(0);
    let head = upgrade_head(addr, "");
    let (answers, lasted) = attack_while_a_device_is_served(&cluster, 16, 1_000, move || {
        let head = head.clone();
        async move { exchange_from(Some(OTHER_CLIENT), addr, head.as_bytes()).await }
    })
    .await;
    let mut upgraded = 0;
    let mut limited = 0;
    for answer in &answers {
        match answer.as_ref().map(|answer| answer.status) {
            Ok(101) => upgraded += 1,
            Ok(429) => limited += 1,
            other => panic!("a flooding upgrade got {other:?}"),
        }
    }
    let budget =
        DEFAULT_UPGRADE_BURST + (DEFAULT_UPGRADE_RATE * lasted.as_secs_f64()).ceil() as usize;
    assert!(
        upgraded <= budget && upgraded >= DEFAULT_UPGRADE_BURST,
        "{upgraded} of {} upgrades got through in {lasted:?}; the budget was {budget}",
        answers.len()
    );
    assert!(limited > 0, "nothing of the flood was refused");
    assert_refused_count(&cluster, "upgrade_rate", limited).await;
}

/// Proves that an upgrade whose `Sec-WebSocket-Key` is missing, not base64, or not 16
/// bytes gets 400 and a closed connection, counted as `bad_websocket_key`, while a device
/// pairs.
#[tokio::test]
async fn a_bad_websocket_key_gets_400() {
    let cluster = gateway_only("hostile-key", ClusterSpec::default()).await;
    let addr = cluster.gateway_addr(0);
    let keys = [
        None,
        Some("not base64 at all!!!!!=="),
        Some("AAAAAAAAAAA="),
        Some("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    ];
    let requests: Vec<String> = keys
        .iter()
        .map(|key| {
            let mut head = format!(
                "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            );
            if let Some(key) = key {
                head.push_str(&format!("Sec-WebSocket-Key: {key}\r\n"));
            }
            head + "\r\n"
        })
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let (answers, _) = attack_while_a_device_is_served(&cluster, 4, 40, move || {
        let request = requests[next.fetch_add(1, Ordering::SeqCst) % requests.len()].clone();
        async move { exchange(addr, request.as_bytes()).await }
    })
    .await;
    assert_all_refused(&answers, 400, "a bad Sec-WebSocket-Key");
    assert_refused_count(&cluster, "bad_websocket_key", answers.len()).await;
}

/// Proves that with `IRIS_ALLOWED_ORIGINS` set, an upgrade from another `Origin` gets 403
/// and a closed connection, counted as `origin`, while a device (no `Origin`) pairs.
#[tokio::test]
async fn a_wrong_origin_gets_403() {
    let spec =
        ClusterSpec::default().gateway_env("IRIS_ALLOWED_ORIGINS", "https://app.example.com");
    let cluster = gateway_only("hostile-origin", spec).await;
    let addr = cluster.gateway_addr(0);
    let allowed = exchange(
        addr,
        upgrade_head(addr, "Origin: https://app.example.com\r\n").as_bytes(),
    )
    .await
    .expect("an answer");
    assert_eq!(allowed.status, 101, "the allowed origin: {allowed:?}");
    let wrong = upgrade_head(addr, "Origin: https://evil.example.net\r\n");
    let (answers, _) = attack_while_a_device_is_served(&cluster, 4, 40, move || {
        let request = wrong.clone();
        async move { exchange(addr, request.as_bytes()).await }
    })
    .await;
    assert_all_refused(&answers, 403, "a wrong Origin");
    assert_refused_count(&cluster, "origin", answers.len()).await;
}

/// Proves that a `GET /ws` carrying a body (`Content-Length: 10` and ten bytes, or a
/// chunked one) gets 400 and a closed connection, counted as `body_on_upgrade`, that one
/// with `Content-Length: 0` upgrades, and that a device pairs meanwhile.
#[tokio::test]
async fn a_body_on_the_upgrade_gets_400() {
    let cluster = gateway_only("hostile-body", ClusterSpec::default()).await;
    let addr = cluster.gateway_addr(0);
    let empty = exchange(addr, upgrade_head(addr, "Content-Length: 0\r\n").as_bytes())
        .await
        .expect("an answer");
    assert_eq!(empty.status, 101, "Content-Length: 0: {empty:?}");
    let requests = [
        upgrade_head(addr, "Content-Length: 10\r\n") + "0123456789",
        upgrade_head(addr, "Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n0\r\n\r\n",
    ];
    let next = Arc::new(AtomicUsize::new(0));
    let (answers, _) = attack_while_a_device_is_served(&cluster, 4, 40, move || {
        let request = requests[next.fetch_add(1, Ordering::SeqCst) % requests.len()].clone();
        async move { exchange(addr, request.as_bytes()).await }
    })
    .await;
    assert_all_refused(&answers, 400, "a body on GET /ws");
    assert_refused_count(&cluster, "body_on_upgrade", answers.len()).await;
}

/// Proves that paths trying to leave the web client's files (dot segments plain and
/// percent-encoded, in an absolute-form target too, slashes and backslashes plain and
/// encoded, `//`, a NUL) get 404 with no file's
/// contents, each counted as `path_traversal`; that an absolute path outside the client
/// gets a plain 404; that the client's own files are still served; and that a device pairs
/// meanwhile.
#[tokio::test]
async fn path_traversal_on_the_web_client_gets_404_and_no_file() {
    let cluster = gateway_only("hostile-traversal", ClusterSpec::default()).await;
    let addr = cluster.gateway_addr(0);
    let served = exchange(addr, get_request(addr, "/app/app.js").as_bytes())
        .await
        .expect("an answer");
    assert_eq!(served.status, 200, "the client's own file: {served:?}");
    let absolute_form = format!("http://{addr}/app/../../Cargo.toml");
    let traversals = [
        "/app/../Cargo.toml",
        "/app/..\\..\\Cargo.toml",
        absolute_form.as_str(),
        "/app/%2e%2e/Cargo.toml",
        "/app/%2E%2E/%2e%2e/etc/passwd",
        "/app/..%2f..%2fetc/passwd",
        "/app/..%5c..%5cCargo.toml",
        "/app/%5c..%5c..%5cgateway%5csrc%5cmain.rs",
        "/app//etc/passwd",
        "/app/%2fetc%2fpasswd",
        "/app/./app.js",
        "/app/app.js%00.html",
        "/../../../../etc/passwd",
    ];
    let requests: Vec<String> = traversals
        .iter()
        .map(|path| get_request(addr, path))
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let (answers, _) =
        attack_while_a_device_is_served(&cluster, 4, traversals.len() * 4, move || {
            let request = requests[next.fetch_add(1, Ordering::SeqCst) % requests.len()].clone();
            async move { exchange(addr, request.as_bytes()).await }
        })
        .await;
    assert_all_refused(&answers, 404, "a traversal path");
    assert_no_file_in(&answers);
    assert_refused_count(&cluster, "path_traversal", answers.len()).await;

    // A path that is simply not the client's is not found, like any unknown route.
    let outside = [exchange(addr, get_request(addr, "/etc/passwd").as_bytes()).await];
    assert_eq!(outside[0].as_ref().expect("an answer").status, 404);
    assert_no_file_in(&outside);
}

/// `GET path` asking the gateway to close the connection after answering.
fn get_request(addr: SocketAddr, path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
}

/// Asserts no answer carries a piece of a repository, system or web client file.
fn assert_no_file_in(answers: &[std::io::Result<RawAnswer>]) {
    for answer in answers.iter().flatten() {
        let body = String::from_utf8_lossy(&answer.body);
        for telltale in ["[workspace]", "root:", "//!", "import ", "<html"] {
            assert!(
                !body.contains(telltale),
                "an answer leaked a file: {body:?}"
            );
        }
    }
}
