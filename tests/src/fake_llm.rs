//! The project's scripted OpenAI-compatible LLM (`tests/fixtures/fake_llm.py`, standard
//! library only) as a process of its own, for the `openai` upstream: it streams reasoning
//! then text, and writes every request body it receives to a folder the test can read.
//! [`hermes_upstream`](crate::hermes_upstream) starts the same script, with its command and
//! readiness wait from here.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child_process::ChildProcess;
use crate::http_probe;
use crate::ports::free_port;
use crate::scratch_dir::ScratchDir;

/// How long the fake LLM may take to answer its first request.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(15);

/// A running fake LLM.
pub struct FakeLlm {
    addr: SocketAddr,
    bodies: PathBuf,
    _process: ChildProcess,
    _scratch: ScratchDir,
}

impl FakeLlm {
    /// Starts the fake LLM on a free port and waits until it lists its model.
    pub async fn start(label: &str) -> Self {
        let scratch = ScratchDir::new(&format!("{label}-llm"));
        let bodies = scratch.path().join("bodies");
        std::fs::create_dir_all(&bodies).expect("creating the request-body folder");
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let command = command("python3", addr.port(), scratch.path(), &bodies);
        let mut process = ChildProcess::spawn("fake_llm", command, scratch.path());
        wait_until_listing_models(addr, &mut process).await;
        Self {
            addr,
            bodies,
            _process: process,
            _scratch: scratch,
        }
    }

    /// Base URL for `IRIS_AGENT_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request body received so far, oldest first.
    pub fn request_bodies(&self) -> Vec<Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.bodies)
            .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .filter_map(|file| serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok())
            .collect()
    }
}

/// The command running the fake LLM with `python` on `port`: its tools run in `workdir`
/// and it writes every request body it receives into `bodies`.
pub(crate) fn command(
    python: impl AsRef<OsStr>,
    port: u16,
    workdir: &Path,
    bodies: &Path,
) -> Command {
    let mut command = Command::new(python);
    command
        .arg(script())
        .arg(port.to_string())
        .arg("--workdir")
        .arg(workdir)
        .arg("--log-dir")
        .arg(bodies)
        .env("PYTHONUNBUFFERED", "1");
    command
}

/// Waits until the fake LLM on `addr` lists its model; panics if `process` ends first or
/// [`STARTUP_TIMEOUT`] passes.
pub(crate) async fn wait_until_listing_models(addr: SocketAddr, process: &mut ChildProcess) {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if let Ok(response) = http_probe::get(addr, "/v1/models").await {
            if response.status == 200 {
                return;
            }
        }
        assert!(
            process.exit_status().is_none() && Instant::now() < deadline,
            "the fake LLM never answered GET /v1/models on {addr}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn script() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("fake_llm.py");
    assert!(script.is_file(), "{} is missing", script.display());
    script
}
