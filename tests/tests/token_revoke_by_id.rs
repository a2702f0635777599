//! Revoking a device token by its id (the first hex digits of its hash, shown by `token
//! list` and the API's list), from the command line and over the server API: the device's
//! live session on another gateway is closed, the token then fails `hello`, unknown and
//! malformed ids are refused clearly, no API route takes a token in its path, and no node
//! ever logs a token.

use serde_json::{json, Value};

use iris_shared::tokens::{digest, id_of};
use iris_tests::client::Client;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{payload_str, type_of};
use iris_tests::http_probe::{self, HttpResponse};

const ADMIN_KEY: &str = "admin-key-for-token-ids-0123456789";
/// Close code of a session whose token was revoked.
const TOKEN_REVOKED: u16 = 4003;
/// Close code of a refused `hello`.
const AUTH_FAILED: u16 = 4001;

fn spec() -> ClusterSpec {
    ClusterSpec::default()
        .gateways(2)
        .workers(0)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
}

/// The id `token list` shows for `token`.
fn token_id(token: &str) -> String {
    id_of(&digest(token)).to_owned()
}

async fn call(cluster: &Cluster, method: &str, path: &str, body: Option<Value>) -> HttpResponse {
    let body = body.map(|b| b.to_string());
    http_probe::request(
        cluster.gateway_addr(0),
        method,
        path,
        Some(ADMIN_KEY),
        body.as_deref(),
    )
    .await
    .unwrap_or_else(|err| panic!("{method} {path}: {err}"))
}

fn json_of(response: &HttpResponse) -> Value {
    serde_json::from_str(&response.body).unwrap_or_else(|_| panic!("not JSON: {response:?}"))
}

/// Waits for the `error {code: auth}` and the close a revoked session gets.
async fn expect_revoked(device: &mut Client) {
    let error = device.recv_until("error").await.pop().unwrap();
    assert_eq!(payload_str(&error, "code"), Some("auth"), "{error}");
    assert_eq!(device.expect_close().await, Some(TOKEN_REVOKED));
}

/// `hello` with `token` on gateway 0 is refused: `error {code: auth}`, close 4001.
async fn expect_hello_refused(cluster: &Cluster, token: &str) {
    let mut device = cluster.connect(0, "after-revoke").await;
    device.send_hello(token, "after-1").await;
    let error = device.recv().await;
    assert_eq!(type_of(&error), "error", "{error}");
    assert_eq!(payload_str(&error, "code"), Some("auth"), "{error}");
    assert_eq!(device.expect_close().await, Some(AUTH_FAILED));
}

/// A connection on `gateway` still answers a ping.
async fn expect_alive(device: &mut Client) {
    device.request("ping", None, json!({})).await;
    device.recv_until("pong").await;
}

/// `iris-gateway token <args>` fails with `message` on stderr.
fn expect_cli_refusal(cluster: &Cluster, args: &[&str], message: &str) {
    let output = cluster.try_token_command(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "token {args:?} succeeded");
    assert!(stderr.contains(message), "token {args:?}: {stderr}");
}

/// Proves that `iris-gateway token list` shows the id that `iris-gateway token revoke
/// --account A --id ID` takes, that revoking by it closes the token's live session on the
/// other gateway (4003) while another token's session stays, and that the token then fails
/// `hello`; an unknown id (exit status and "no token with id ... in account ...") and a
/// malformed one are refused.
#[tokio::test]
async fn revoking_by_id_from_the_cli_closes_the_tokens_sessions_and_the_token_then_fails() {
    let cluster = Cluster::start("token-id-cli", spec()).await;
    let token = cluster.create_token("ida");
    let other = cluster.create_token("ida");
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&other, "phone-1").await;

    let mut listed = cluster.token_ids("ida");
    listed.sort();
    let mut expected = vec![token_id(&token), token_id(&other)];
    expected.sort();
    assert_eq!(listed, expected, "token list shows other ids");

    cluster.revoke_token_by_id("ida", &token_id(&token));
    expect_revoked(&mut tablet).await;
    expect_alive(&mut phone).await;
    expect_hello_refused(&cluster, &token).await;
    assert_eq!(cluster.token_ids("ida"), [token_id(&other)]);

    let gone = token_id(&token);
    expect_cli_refusal(
        &cluster,
        &["revoke", "--account", "ida", "--id", &gone],
        &format!("no token with id {gone} in account ida"),
    );
    expect_cli_refusal(
        &cluster,
        &["revoke", "--account", "ida", "--id", &gone[..8]],
        "malformed token id",
    );
    expect_cli_refusal(
        &cluster,
        &["revoke", "--account", "nobody", "--id", &token_id(&other)],
        "no token with id",
    );
    expect_alive(&mut phone).await;
}

/// Proves the API's revocations: the old route with the token in its path is gone (404
/// or 405, and the token keeps working), `DELETE /accounts/{account}/tokens/{id}` with
/// the id the listing shows revokes the token and closes its live session on the other
/// gateway, `POST /tokens/revoke {"token"}` does the same for a caller holding the token;
/// both answer 404 once revoked, and 400 for a malformed id or token.
#[tokio::test]
async fn revoking_by_id_over_the_api_closes_the_tokens_sessions_and_no_route_takes_a_token() {
    let cluster = Cluster::start("token-id-api", spec()).await;
    let created = call(
        &cluster,
        "POST",
        "/api/v1/accounts/vera/tokens",
        Some(json!({ "name": "tablet" })),
    )
    .await;
    assert_eq!(created.status, 201, "{created:?}");
    let created = json_of(&created);
    let token = created["token"].as_str().unwrap().to_owned();
    let id = created["id"].as_str().unwrap().to_owned();
    let other = cluster.create_token("vera");
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    let mut phone = cluster.connect(1, "phone").await;
    phone.pair(&other, "phone-1").await;

    let listed = json_of(&call(&cluster, "GET", "/api/v1/accounts/vera/tokens", None).await);
    let ids: Vec<&str> = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(ids.contains(&id.as_str()), "{listed}");

    let old_route = call(&cluster, "DELETE", &format!("/api/v1/tokens/{token}"), None).await;
    assert!(
        [404, 405].contains(&old_route.status),
        "the token-in-path route answered {old_route:?}"
    );
    expect_alive(&mut tablet).await;

    let by_id = format!("/api/v1/accounts/vera/tokens/{id}");
    let revoked = call(&cluster, "DELETE", &by_id, None).await;
    assert_eq!(revoked.status, 200, "{revoked:?}");
    assert_eq!(
        json_of(&revoked),
        json!({ "revoked": true, "account": "vera", "id": id })
    );
    expect_revoked(&mut tablet).await;
    expect_alive(&mut phone).await;
    expect_hello_refused(&cluster, &token).await;
    let again = call(&cluster, "DELETE", &by_id, None).await;
    assert_eq!(again.status, 404, "{again:?}");
    assert_eq!(json_of(&again)["error"]["code"], "not_found", "{again:?}");
    let malformed = call(&cluster, "DELETE", "/api/v1/accounts/vera/tokens/abc", None).await;
    assert_eq!(malformed.status, 400, "{malformed:?}");

    let by_body = Some(json!({ "token": other }));
    let revoked = call(&cluster, "POST", "/api/v1/tokens/revoke", by_body.clone()).await;
    assert_eq!(revoked.status, 200, "{revoked:?}");
    assert_eq!(
        json_of(&revoked),
        json!({ "revoked": true, "account": "vera", "id": token_id(&other) })
    );
    expect_revoked(&mut phone).await;
    let again = call(&cluster, "POST", "/api/v1/tokens/revoke", by_body).await;
    assert_eq!(again.status, 404, "{again:?}");
    let not_a_token = Some(json!({ "token": "hunter2" }));
    let malformed = call(&cluster, "POST", "/api/v1/tokens/revoke", not_a_token).await;
    assert_eq!(malformed.status, 400, "{malformed:?}");
}

/// Proves that no node logs a token, with every node logging everything (`RUST_LOG=trace`,
/// so each log shows lines below info level from the work itself): after pairing with
/// one, a `hello` with a well-formed token that was never issued, a revocation by id and
/// one by the token in a request body, neither gateway's nor the worker's log contains
/// any of those tokens or their random part.
#[tokio::test]
async fn no_node_log_contains_a_token() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .gateway_env("RUST_LOG", "trace")
        .worker_env("RUST_LOG", "trace")
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("token-logs", spec).await;
    let token = cluster.create_token("lea");
    let other = cluster.create_token("lea");
    let never_issued = format!("iris_{}", "5a".repeat(24));

    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&other, "phone-1").await;
    phone
        .request(
            "message.send",
            Some("android:default"),
            json!({ "text": "hello there" }),
        )
        .await;
    phone.recv_until("agent.idle").await;
    expect_hello_refused(&cluster, &never_issued).await;

    cluster.revoke_token_by_id("lea", &token_id(&token));
    expect_revoked(&mut tablet).await;
    let revoked = call(
        &cluster,
        "POST",
        "/api/v1/tokens/revoke",
        Some(json!({ "token": other })),
    )
    .await;
    assert_eq!(revoked.status, 200, "{revoked:?}");
    expect_revoked(&mut phone).await;

    let logs = [
        ("gw-1", cluster.gateway_log(0)),
        ("gw-2", cluster.gateway_log(1)),
        ("worker-a", cluster.worker_log(0)),
    ];
    for (node, log) in &logs {
        assert!(
            log.contains("TRACE"),
            "{node} logged nothing below info level"
        );
        for secret in [&token, &other, &never_issued] {
            let random = secret.trim_start_matches("iris_");
            let leaks: Vec<&str> = log.lines().filter(|line| line.contains(random)).collect();
            assert!(leaks.is_empty(), "{node}'s log shows a token: {leaks:#?}");
        }
    }
}
