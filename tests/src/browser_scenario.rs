//! Runs one browser scenario of `tests/browser/` (Node with playwright-core, driving Debian's
//! headless Chromium against the gateways' web client) and carries out what it asks of the
//! cluster on the way.
//!
//! The scenario learns the gateways' URLs and a device token from its environment and prints
//! its progress on stdout. A line starting with `@` is a request to the test, such as
//! `@kill-gateway 0`; the test carries it out on the cluster, then answers `done` on the
//! scenario's stdin, so the page is only looked at once the cluster changed. The scenario
//! passes when Node exits 0.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::binaries::{target_dir, workspace_root};
use crate::cluster::Cluster;

/// Where Debian puts Chromium; `IRIS_CHROMIUM` overrides it.
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// What a scenario is given besides the cluster.
pub struct ScenarioSetup {
    /// The account the token belongs to.
    pub account: String,
    /// The device token both browser profiles pair with (one account, two devices).
    pub token: String,
    /// The gateways' `IRIS_ADMIN_KEY`, for scenarios that use the server API.
    pub admin_key: String,
    /// The longest the whole scenario may take.
    pub timeout: Duration,
}

/// The folder of the browser tests (with its `node_modules`).
fn browser_dir() -> PathBuf {
    workspace_root().join("tests").join("browser")
}

/// Where the scenarios keep their screenshots: test output, kept after the run.
pub fn screenshot_dir() -> PathBuf {
    target_dir().join("web-client-screenshots")
}

/// Runs `tests/browser/scenarios/{name}.mjs` against `cluster`; panics with the scenario's
/// own account of what failed if it does not pass within `setup.timeout`.
pub async fn run_scenario(name: &str, cluster: &mut Cluster, setup: ScenarioSetup) {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules").join("playwright-core").is_dir(),
        "playwright-core is not installed in {}: run `npm ci` there (scripts/test.sh does)",
        dir.display()
    );
    let chromium = std::env::var("IRIS_CHROMIUM").unwrap_or_else(|_| DEFAULT_CHROMIUM.into());
    assert!(
        PathBuf::from(&chromium).is_file(),
        "Chromium not found at {chromium}: run scripts/install-deps.sh (Debian's chromium) or \
         set IRIS_CHROMIUM"
    );
    let gateways: Vec<String> = (0..cluster.gateway_count())
        .map(|index| format!("http://{}", cluster.gateway_addr(index)))
        .collect();
    let mut child = Command::new("node")
        .arg(dir.join("scenarios").join(format!("{name}.mjs")))
        .current_dir(&dir)
        .env("IRIS_WEB_GATEWAYS", gateways.join(" "))
        .env("IRIS_WEB_ACCOUNT", &setup.account)
        .env("IRIS_WEB_TOKEN", &setup.token)
        .env("IRIS_WEB_ADMIN_KEY", &setup.admin_key)
        .env("IRIS_WEB_SCREENSHOTS", screenshot_dir())
        .env("IRIS_CHROMIUM", &chromium)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("starting node (install Node.js: scripts/install-deps.sh)");
    let mut answers = child.stdin.take().expect("scenario stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("scenario stdout")).lines();

    let conversation = async {
        while let Some(line) = lines
            .next_line()
            .await
            .expect("reading the scenario's output")
        {
            match line.strip_prefix('@') {
                Some(request) => {
                    eprintln!("[{name}] asks: {request}");
                    carry_out(cluster, request).await;
                    answers
                        .write_all(b"done\n")
                        .await
                        .expect("answering the scenario");
                    answers.flush().await.expect("answering the scenario");
                }
                None => eprintln!("[{name}] {line}"),
            }
        }
        child.wait().await.expect("waiting for node")
    };
    let status = tokio::time::timeout(setup.timeout, conversation)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "browser scenario {name} took longer than {:?}",
                setup.timeout
            )
        });
    assert!(
        status.success(),
        "browser scenario {name} failed ({status}); its screenshots are in {}",
        screenshot_dir().display()
    );
}

/// Carries out one request of a scenario on the cluster.
async fn carry_out(cluster: &mut Cluster, request: &str) {
    let mut words = request.split_whitespace();
    let verb = words.next().unwrap_or_default();
    let index: usize = words
        .next()
        .and_then(|word| word.parse().ok())
        .unwrap_or_else(|| panic!("the scenario asked {request:?}: no gateway index"));
    match verb {
        "kill-gateway" => {
            cluster.kill_gateway(index);
            while !cluster.gateway_exited(index) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        "restart-gateway" => cluster.restart_gateway(index).await,
        _ => panic!("the scenario asked {request:?}, which this test does not know"),
    }
}
