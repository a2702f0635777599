//! The per-IP `hello` attempt limit (`IRIS_HELLO_RATE`, `IRIS_HELLO_BURST`): attempts
//! over it, failed ones included, get `error {code: rate_limited}` and close 4105; the
//! client address is the socket's unless `IRIS_TRUST_FORWARDED_FOR` says a proxy sets
//! `X-Forwarded-For`.

use iris_tests::client::Client;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, type_of};

/// The close code for too many `hello` attempts (docs/wire-protocol.md).
const TOO_MANY_HELLOS: u16 = 4105;
/// The close code for a failed `hello` (docs/wire-protocol.md).
const AUTH_FAILED: u16 = 4001;

/// A budget of three attempts that does not refill within a test.
fn limited_spec() -> ClusterSpec {
    ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_HELLO_RATE", "0.001")
        .gateway_env("IRIS_HELLO_BURST", "3")
}

/// Sends `hello` with `token`; returns the close code after an `error` with `code`.
async fn refused_hello(client: &mut Client, token: &str, code: &str) -> Option<u16> {
    let id = client.send_hello(token, "phone-1").await;
    let error = client.recv().await;
    assert_eq!(type_of(&error), "error", "{error}");
    assert_eq!(payload_str(&error, "code"), Some(code), "{error}");
    assert_eq!(id_of(&error), Some(id), "{error}");
    client.expect_close().await
}

/// Proves that failed `hello`s (bad tokens) use up the address's budget, so that the
/// next attempt, even with a good token, gets `rate_limited` and close 4105 instead of
/// pairing.
#[tokio::test]
async fn hello_attempts_over_the_per_ip_limit_are_refused_failed_ones_included() {
    let cluster = Cluster::start("hello-limit", limited_spec()).await;
    let token = cluster.create_token("olga");
    for attempt in 0..3 {
        let mut guesser = cluster.connect(0, &format!("guess-{attempt}")).await;
        let close = refused_hello(&mut guesser, "iris_wrong", "auth").await;
        assert_eq!(close, Some(AUTH_FAILED));
    }
    let mut phone = cluster.connect(0, "phone").await;
    let close = refused_hello(&mut phone, &token, "rate_limited").await;
    assert_eq!(close, Some(TOO_MANY_HELLOS));
}

/// Proves that `X-Forwarded-For` is ignored by default (a client cannot escape the limit
/// by claiming other addresses) and, with `IRIS_TRUST_FORWARDED_FOR=true`, gives each
/// forwarded client its own budget.
#[tokio::test]
async fn forwarded_for_counts_only_when_the_proxy_is_trusted() {
    let untrusted = Cluster::start("hello-xff-untrusted", limited_spec()).await;
    let token = untrusted.create_token("pia");
    let addr = untrusted.gateway_addr(0);
    for attempt in 0..3u8 {
        let claimed = format!("198.51.100.{attempt}");
        let mut phone =
            Client::connect_with_headers(addr, "claims", &[("x-forwarded-for", &claimed)]).await;
        phone.hello(&token, &format!("phone-{attempt}")).await;
    }
    let mut fourth =
        Client::connect_with_headers(addr, "fourth", &[("x-forwarded-for", "198.51.100.9")]).await;
    let close = refused_hello(&mut fourth, &token, "rate_limited").await;
    assert_eq!(close, Some(TOO_MANY_HELLOS));
    drop(untrusted);

    let spec = limited_spec().gateway_env("IRIS_TRUST_FORWARDED_FOR", "true");
    let trusted = Cluster::start("hello-xff-trusted", spec).await;
    let token = trusted.create_token("pia");
    let addr = trusted.gateway_addr(0);
    let spoofed_then_proxy = "203.0.113.1, 192.0.2.10";
    for attempt in 0..3 {
        let mut phone = Client::connect_with_headers(
            addr,
            &format!("proxied-{attempt}"),
            &[("x-forwarded-for", spoofed_then_proxy)],
        )
        .await;
        phone.hello(&token, &format!("phone-{attempt}")).await;
    }
    let mut over =
        Client::connect_with_headers(addr, "over", &[("x-forwarded-for", "192.0.2.10")]).await;
    let close = refused_hello(&mut over, &token, "rate_limited").await;
    assert_eq!(close, Some(TOO_MANY_HELLOS));
    // Another client behind the same proxy has a budget of its own.
    let mut other =
        Client::connect_with_headers(addr, "other", &[("x-forwarded-for", "192.0.2.11")]).await;
    other.hello(&token, "phone-9").await;
}
