//! Secrets never print: a Redis password (in every URL scheme), the admin key, the
//! upstream agent's key and URL password, the ntfy token, an FCM private key and the OTLP
//! headers are fed to every binary and command (help, token commands, nodes serving
//! traffic at debug level, nodes failing to reach Redis or the agent), and all of their
//! output is searched for them.

use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use iris_tests::binaries::binary;
use iris_tests::child_process::ChildProcess;
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::fake_llm::FakeLlm;
use iris_tests::http_recorder::HttpRecorder;
use iris_tests::otlp_receiver::OtlpReceiver;
use iris_tests::ports::free_port;
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;

/// How long a node may take to log the failure a test waits for.
const FAILURE_LOG_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a push may take to reach the ntfy stand-in.
const PUSH_TIMEOUT: Duration = Duration::from_secs(15);

/// Secret values unique to one test run, so a match can only be a leak.
struct Secrets {
    redis_password: String,
    admin_key: String,
    wrong_admin_key: String,
    agent_key: String,
    agent_url_password: String,
    ntfy_token: String,
    otlp_header: String,
    fcm_private_key: String,
}

impl Secrets {
    fn new() -> Self {
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let unique = |what: &str| format!("{what}{nonce:x}{}", std::process::id());
        Self {
            redis_password: unique("redispw"),
            admin_key: unique("adminkey"),
            wrong_admin_key: unique("wrongadminkey"),
            agent_key: unique("sk-agentkey"),
            agent_url_password: unique("agenturlpw"),
            ntfy_token: unique("tk_ntfytoken"),
            otlp_header: unique("otlpheader"),
            fcm_private_key: unique("fcmprivatekey"),
        }
    }

    fn all(&self) -> [&str; 8] {
        [
            &self.redis_password,
            &self.admin_key,
            &self.wrong_admin_key,
            &self.agent_key,
            &self.agent_url_password,
            &self.ntfy_token,
            &self.otlp_header,
            &self.fcm_private_key,
        ]
    }

    /// Every secret-bearing setting, as environment variables, pointing at `redis_url`
    /// (which must carry the password) and an agent at `agent_base` (`host:port`).
    fn env(&self, redis_url: &str, agent_base: &str) -> Vec<(String, String)> {
        [
            ("IRIS_REDIS_URL", redis_url.to_owned()),
            ("IRIS_ADMIN_KEY", self.admin_key.clone()),
            ("IRIS_AGENT_API_KEY", self.agent_key.clone()),
            (
                "IRIS_AGENT_URL",
                format!("http://iris:{}@{agent_base}/v1", self.agent_url_password),
            ),
            ("IRIS_NTFY_TOKEN", self.ntfy_token.clone()),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization=Bearer {}", self.otlp_header),
            ),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
    }

    /// Panics naming `what` and the secret if `text` contains any secret.
    fn assert_absent(&self, what: &str, text: &str) {
        for secret in self.all() {
            assert!(
                !text.contains(secret),
                "{what} printed the secret {secret:?}:\n{text}"
            );
        }
    }
}

/// A Redis URL with the password, of `scheme`, to a closed port.
fn unreachable_url(scheme: &str, password: &str) -> String {
    let port = free_port();
    match scheme {
        "redis+sentinel" => format!("{scheme}://iris:{password}@127.0.0.1:{port}/mymaster"),
        _ => format!("{scheme}://iris:{password}@127.0.0.1:{port}"),
    }
}

/// A private Redis with an ACL user `iris` logging in with `password`.
fn redis_with_user(scratch: &ScratchDir, password: &str) -> RedisServer {
    let redis = RedisServer::start(scratch.path());
    let rule = format!(">{password}");
    redis
        .command(&["ACL", "SETUSER", "iris", "on", &rule, "~*", "&*", "+@all"])
        .expect("creating the Redis user");
    redis
}

fn run(binary_name: &str, args: &[&str], env: &[(String, String)]) -> Output {
    Command::new(binary(binary_name))
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
        .env("RUST_LOG", "debug")
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|err| panic!("running {binary_name} {args:?}: {err}"))
}

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Proves that `--help` of both nodes, the token commands and the bench, run with every
/// secret in the environment, lists the settings without any value.
#[test]
fn help_of_every_binary_and_command_shows_no_configured_secret() {
    let secrets = Secrets::new();
    let env = secrets.env(
        &format!("redis://iris:{}@127.0.0.1:6379", secrets.redis_password),
        "127.0.0.1:8642",
    );
    for (binary_name, args) in [
        ("iris-gateway", vec!["--help"]),
        ("iris-gateway", vec!["serve", "--help"]),
        ("iris-gateway", vec!["token", "create", "--help"]),
        ("iris-gateway", vec!["token", "revoke", "--help"]),
        ("iris-gateway", vec!["token", "list", "--help"]),
        ("iris-worker", vec!["--help"]),
        ("iris-bench", vec!["--help"]),
    ] {
        let output = run(binary_name, &args, &env);
        let text = printed(&output);
        assert!(output.status.success(), "{binary_name} {args:?}: {text}");
        assert!(
            text.contains("IRIS_"),
            "{binary_name} {args:?} lists no settings: {text}"
        );
        secrets.assert_absent(&format!("{binary_name} {args:?}"), &text);
    }
}

/// Proves that the token commands fail clearly and without the password when Redis is
/// unreachable under every URL scheme, when the URL is malformed, and when the password
/// is wrong; and that with the right password they work and print no password either.
#[test]
fn token_commands_never_print_the_redis_password() {
    let secrets = Secrets::new();
    let scratch = ScratchDir::new("secrets-token-commands");
    let redis = redis_with_user(&scratch, &secrets.redis_password);
    let password = &secrets.redis_password;
    let list = ["token", "list", "--account", "ada"];

    let mut failing: Vec<String> = ["redis", "rediss", "redis+sentinel", "redis+cluster"]
        .iter()
        .map(|scheme| unreachable_url(scheme, password))
        .collect();
    failing.push(format!("redis+sentinel://iris:{password}@127.0.0.1:1"));
    failing.push(format!(
        "redis://iris:{}@127.0.0.1:{}",
        secrets.wrong_admin_key,
        redis.port()
    ));
    for url in &failing {
        let env = vec![("IRIS_REDIS_URL".to_owned(), url.clone())];
        let output = run("iris-gateway", &list, &env);
        let text = printed(&output);
        assert!(
            !output.status.success(),
            "token list with {url} worked: {text}"
        );
        assert!(
            text.contains("Redis"),
            "token list with {url} says nothing of Redis: {text}"
        );
        secrets.assert_absent(&format!("token list with a failing URL {url}"), &text);
    }

    let env = vec![(
        "IRIS_REDIS_URL".to_owned(),
        format!("redis://iris:{password}@127.0.0.1:{}", redis.port()),
    )];
    let created = run(
        "iris-gateway",
        &["token", "create", "--account", "ada"],
        &env,
    );
    let text = printed(&created);
    assert!(created.status.success(), "{text}");
    secrets.assert_absent("token create", &text);
    let token = String::from_utf8_lossy(&created.stdout)
        .lines()
        .last()
        .expect("a token line")
        .trim()
        .to_owned();
    let listed = run("iris-gateway", &list, &env);
    assert!(listed.status.success(), "{}", printed(&listed));
    let listing = printed(&listed);
    secrets.assert_absent("token list", &listing);
    assert!(
        !listing.contains(&token),
        "token list printed the token: {listing}"
    );
    let revoked = run("iris-gateway", &["token", "revoke", &token], &env);
    assert!(revoked.status.success(), "{}", printed(&revoked));
    secrets.assert_absent("token revoke", &printed(&revoked));
}

async fn publish(cluster: &Cluster, key: &str, account: &str, text: &str) -> u16 {
    let body = json!({ "text": text, "role": "cron" }).to_string();
    let path = format!("/api/v1/accounts/{account}/messages");
    cluster
        .server_api(0, "POST", &path, Some(key), Some(&body))
        .await
        .status
}

/// Proves that nodes logging at debug level through a whole day's work — logging in to
/// Redis with a password, a streamed turn through an upstream reached with a key and a URL
/// password, the server API with the right and a wrong admin key, a push through ntfy
/// with its token, traces exported with authorization headers, and a drain — write none
/// of those secrets, and no device token either.
#[tokio::test]
async fn nodes_serving_traffic_at_debug_level_log_no_secret() {
    let secrets = Secrets::new();
    let llm = FakeLlm::start("secrets-llm").await;
    let ntfy = HttpRecorder::start().await;
    let otlp = OtlpReceiver::start().await;
    let agent_base = llm.url().trim_start_matches("http://").to_owned();
    let mut spec = ClusterSpec::default()
        .redis(RedisKind::Plain)
        .redis_user("iris", &secrets.redis_password)
        .worker_env("IRIS_AGENT", "openai")
        .worker_env("IRIS_NTFY_URL", &ntfy.url());
    for (name, value) in secrets.env("", &agent_base) {
        if name == "IRIS_REDIS_URL" {
            continue;
        }
        spec = spec.gateway_env(&name, &value).worker_env(&name, &value);
    }
    for (name, value) in [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.grpc_endpoint()),
        ("RUST_LOG", "debug".to_owned()),
    ] {
        spec = spec.gateway_env(name, &value).worker_env(name, &value);
    }
    let mut cluster = Cluster::start("secrets-serving", spec).await;
    assert!(
        cluster.node_redis_url().contains(&secrets.redis_password),
        "the nodes do not log in with the password"
    );
    let token = cluster.create_token("ada");

    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone
        .request("fcm.register", None, json!({ "ntfy_topic": "ada-tablet" }))
        .await;
    phone.recv_until("notification").await;
    phone.send_message("tell me a story").await;
    let stop = phone.recv_until("message.stop").await;
    assert!(!stop.is_empty());
    phone.close().await;

    assert_eq!(
        publish(&cluster, &secrets.wrong_admin_key, "ada", "no").await,
        401
    );
    assert_eq!(
        publish(&cluster, &secrets.admin_key, "ada", "ping while away").await,
        202
    );
    let pushes = ntfy.wait_for(1, PUSH_TIMEOUT).await;
    assert_eq!(
        pushes[0].header("authorization").map(str::to_owned),
        Some(format!("Bearer {}", secrets.ntfy_token)),
        "the push did not carry the ntfy token: {pushes:?}"
    );
    let bad_hello_token = format!("iris_{}", "0".repeat(48));
    let mut stranger = cluster.connect(0, "stranger").await;
    stranger
        .send(&json!({ "v": 1, "id": 1, "type": "hello", "payload": { "token": bad_hello_token, "device_id": "x" } }))
        .await;
    stranger.recv_until("error").await;

    cluster.terminate_gateway(0);
    cluster.terminate_worker(0);
    while !(cluster.gateway_exited(0) && cluster.worker_exited(0)) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (what, log) in [
        ("the gateway", cluster.gateway_log(0)),
        ("the worker", cluster.worker_log(0)),
    ] {
        assert!(log.contains("DEBUG"), "{what} did not log at debug level");
        assert!(
            log.contains("redis://iris:***@127.0.0.1:"),
            "{what}'s startup line does not name its Redis, masked"
        );
        secrets.assert_absent(what, &log);
        assert!(!log.contains(&token), "{what} logged a device token");
        assert!(
            !log.contains(&bad_hello_token),
            "{what} logged a presented token"
        );
    }
}

/// Waits until `process` has logged `needle` (or exited), then returns its log.
async fn log_once_it_says(process: &mut ChildProcess, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + FAILURE_LOG_TIMEOUT;
    loop {
        let log = process.log_text();
        if log.contains(needle) || process.exit_status().is_some() {
            return process.log_text();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never logged {needle:?}:\n{log}",
            process.name()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Proves that a gateway that cannot reach its passworded Redis, a worker whose upstream
/// agent (URL with a password, and a key) is down, and a worker given an unusable FCM key
/// file report those failures without the password, the key or the private key.
#[tokio::test]
async fn nodes_failing_to_reach_redis_or_the_agent_report_it_without_secrets() {
    let secrets = Secrets::new();
    let scratch = ScratchDir::new("secrets-failing-nodes");
    let closed_agent = format!("127.0.0.1:{}", free_port());
    let env = secrets.env(
        &unreachable_url("redis", &secrets.redis_password),
        &closed_agent,
    );
    let node = |binary_name: &str, extra: &[(&str, String)]| {
        let mut command = Command::new(binary(binary_name));
        command
            .envs(env.iter().map(|(name, value)| (name, value)))
            .envs(extra.iter().map(|(name, value)| (*name, value)))
            .env("RUST_LOG", "debug")
            .env("NO_COLOR", "1");
        command
    };

    let gateway_command = node(
        "iris-gateway",
        &[("IRIS_LISTEN", format!("127.0.0.1:{}", free_port()))],
    );
    let mut gateway = ChildProcess::spawn("gateway", gateway_command, scratch.path());
    let gateway_log = log_once_it_says(&mut gateway, "Redis").await;
    secrets.assert_absent("a gateway without Redis", &gateway_log);

    let worker_command = node("iris-worker", &[("IRIS_AGENT", "openai".to_owned())]);
    let mut worker = ChildProcess::spawn("worker-openai", worker_command, scratch.path());
    let worker_log = log_once_it_says(&mut worker, "IRIS_AGENT_URL").await;
    assert!(
        worker_log.contains("***"),
        "the agent URL is not shown masked: {worker_log}"
    );
    secrets.assert_absent("a worker without its agent", &worker_log);

    let key_file = scratch.path().join("fcm.json");
    let key = json!({
        "project_id": "p",
        "client_email": "iris@p.iam.gserviceaccount.com",
        "private_key": format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", secrets.fcm_private_key),
    });
    std::fs::write(&key_file, key.to_string()).expect("writing the key file");
    // Push settings are read once Redis takes the worker's first write.
    let redis = redis_with_user(&scratch, &secrets.redis_password);
    let fcm_command = node(
        "iris-worker",
        &[
            ("IRIS_FCM_CREDENTIALS", key_file.display().to_string()),
            ("IRIS_AGENT", "echo".to_owned()),
            (
                "IRIS_REDIS_URL",
                format!(
                    "redis://iris:{}@127.0.0.1:{}",
                    secrets.redis_password,
                    redis.port()
                ),
            ),
        ],
    );
    let mut fcm_worker = ChildProcess::spawn("worker-fcm", fcm_command, scratch.path());
    let fcm_log = log_once_it_says(&mut fcm_worker, "FCM").await;
    secrets.assert_absent("a worker with an unusable FCM key", &fcm_log);
}
