//! A real Hermes Agent 0.19 API server for one test, thinking with the project's scripted
//! fake LLM (`tests/fixtures/fake_llm.py`), so the worker's `hermes` backend runs real
//! Hermes turns, tools and approvals without a real model. Both processes log into the
//! upstream's own scratch directory and are killed when it is dropped.
//!
//! Hermes comes from the virtual environment `scripts/install-hermes.sh` creates
//! (`$IRIS_HERMES_VENV`, else `~/.cache/iris-cluster/hermes-0.19-venv`). Each upstream has
//! its own ports, `HERMES_HOME` and terminal folder, so tests may run side by side.
//! It also speaks a little of the Hermes runs API itself (through [`http_probe`]), to prove
//! the fixture works without the cluster.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::child_process::ChildProcess;
use crate::cluster_spec::ClusterSpec;
use crate::fake_llm;
use crate::http_probe::{self, HttpResponse};
use crate::ports::free_port;
use crate::scratch_dir::ScratchDir;

/// The fake LLM's whole answer to a plain message (e.g. "hello there").
pub const PLAIN_ANSWER: &str = "Hello from the fake LLM!";
/// How the fake LLM's answer after a tool call starts; the tool's result follows.
pub const TOOL_ANSWER_PREFIX: &str = "Tool result received: ";
/// Files in the terminal folder, which the `run ls` tool call lists.
pub const LISTED_FILES: [&str; 2] = ["alpha.txt", "beta.txt"];
/// Folder inside the terminal folder that the `dangerous` tool call (`rm -rf`) removes.
pub const DOOMED_DIR: &str = "doomed";

/// Hermes version the project is tested against.
const HERMES_VERSION: &str = "0.19";
/// How long Hermes may take to answer `/health` (it imports a lot of Python).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one request to Hermes may take, event streams included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Log lines shown per process when a test fails.
const LOG_LINES_ON_FAILURE: usize = 60;

/// A running Hermes API server and its fake LLM; both die with it.
pub struct HermesUpstream {
    addr: SocketAddr,
    api_key: String,
    workdir: PathBuf,
    hermes: ChildProcess,
    fake_llm: ChildProcess,
    /// Declared last: dropped after the processes, kept on failure for their logs.
    scratch: ScratchDir,
}

impl HermesUpstream {
    /// Starts the fake LLM and Hermes (each on a free port, in a fresh `HERMES_HOME` under
    /// a scratch directory named after `label`) and waits until Hermes answers `/health`.
    /// Panics, saying to run `scripts/install-hermes.sh`, if Hermes is not installed.
    pub async fn start(label: &str) -> Self {
        let venv = hermes_venv();
        let hermes_bin = venv.join("bin").join("hermes");
        assert!(
            hermes_bin.is_file(),
            "Hermes Agent {HERMES_VERSION} not found at {}: run scripts/install-hermes.sh \
             (or set IRIS_HERMES_VENV to a virtual environment that has it)",
            hermes_bin.display()
        );
        let scratch = ScratchDir::new(&format!("{label}-hermes"));
        let workdir = scratch.path().join("work");
        let hermes_home = scratch.path().join("hermes_home");
        for dir in [&workdir, &workdir.join(DOOMED_DIR), &hermes_home] {
            create_dir(dir);
        }
        for file in LISTED_FILES {
            write_file(&workdir.join(file), file);
        }

        let llm_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut fake_llm_command = fake_llm::command(
            venv.join("bin").join("python3"),
            llm_addr.port(),
            &workdir,
            &scratch.path().join("fake_llm_bodies"),
        );
        fake_llm_command.current_dir(scratch.path());
        let fake_llm = ChildProcess::spawn("fake_llm", fake_llm_command, scratch.path());

        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let api_key = random_api_key();
        write_file(
            &hermes_home.join("config.yaml"),
            &hermes_config(llm_addr, addr, &workdir),
        );
        let mut hermes_command = Command::new(&hermes_bin);
        hermes_command
            .args(["gateway", "run", "-v"])
            .env_clear()
            .envs(passed_through_env())
            .env("HERMES_HOME", &hermes_home)
            .env("API_SERVER_ENABLED", "true")
            .env("API_SERVER_HOST", "127.0.0.1")
            .env("API_SERVER_PORT", addr.port().to_string())
            .env("API_SERVER_KEY", &api_key)
            .env("TIRITH_ENABLED", "false")
            .env("PYTHONUNBUFFERED", "1")
            .env("NO_COLOR", "1")
            .current_dir(scratch.path());
        let hermes = ChildProcess::spawn("hermes", hermes_command, scratch.path());

        let mut upstream = Self {
            addr,
            api_key,
            workdir,
            hermes,
            fake_llm,
            scratch,
        };
        fake_llm::wait_until_listing_models(llm_addr, &mut upstream.fake_llm).await;
        upstream.wait_hermes_ready().await;
        upstream
    }

    async fn wait_hermes_ready(&mut self) {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(response) = http_probe::get(self.addr, "/health").await {
                if response.status == 200 {
                    return;
                }
            }
            if self.hermes.exit_status().is_some() {
                panic!("Hermes exited during startup");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!(
            "Hermes never answered /health on {} within {STARTUP_TIMEOUT:?}",
            self.addr
        );
    }

    /// Base URL of the API server, e.g. `http://127.0.0.1:PORT` (what `IRIS_AGENT_URL` takes).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Address of the API server.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Bearer token of the API server (what `IRIS_AGENT_API_KEY` takes).
    pub fn api_key(&self) -> &str {
        &self.api_key
    }

    /// `spec` with its workers running their turns on this Hermes (`IRIS_AGENT=hermes`).
    pub fn workers_of(&self, spec: ClusterSpec) -> ClusterSpec {
        spec.worker_env("IRIS_AGENT", "hermes")
            .worker_env("IRIS_AGENT_URL", &self.url())
            .worker_env("IRIS_AGENT_API_KEY", self.api_key())
    }

    /// The folder Hermes' terminal tool runs in; holds [`LISTED_FILES`] and [`DOOMED_DIR`].
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The folder the `dangerous` tool call deletes (exists until an approved run removes it).
    pub fn doomed_dir(&self) -> PathBuf {
        self.workdir.join(DOOMED_DIR)
    }

    /// `POST /v1/runs {input}` straight to Hermes; returns the run id.
    pub async fn start_run(&self, input: &str) -> String {
        let body = json!({ "input": input }).to_string();
        let response = self
            .request("POST", "/v1/runs", Some(&body))
            .await
            .unwrap_or_else(|err| panic!("POST /v1/runs failed: {err}"));
        assert_eq!(response.status, 202, "POST /v1/runs answered {response:?}");
        let started: Value = serde_json::from_str(&response.body)
            .unwrap_or_else(|err| panic!("POST /v1/runs answered non-JSON ({err}): {response:?}"));
        started["run_id"]
            .as_str()
            .unwrap_or_else(|| panic!("POST /v1/runs answered without run_id: {started}"))
            .to_owned()
    }

    /// Every event of run `run_id` (`GET /v1/runs/{id}/events`), until Hermes closes the stream.
    pub async fn run_events(&self, run_id: &str) -> Vec<Value> {
        let path = format!("/v1/runs/{run_id}/events");
        let response = self
            .request("GET", &path, None)
            .await
            .unwrap_or_else(|err| panic!("GET {path} failed: {err}"));
        assert_eq!(response.status, 200, "GET {path} answered {response:?}");
        response
            .body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| {
                serde_json::from_str(data)
                    .unwrap_or_else(|err| panic!("event is not JSON ({err}): {data}"))
            })
            .collect()
    }

    /// One authorized HTTP/1.1 request with an optional JSON body.
    async fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> io::Result<HttpResponse> {
        let key = Some(self.api_key.as_str());
        http_probe::request_within(REQUEST_TIMEOUT, self.addr, method, path, key, body, &[]).await
    }

    /// Log paths and last log lines of Hermes and the fake LLM, for a failure report.
    pub fn diagnostics(&mut self) -> String {
        [
            format!("hermes upstream logs in {}", self.scratch.path().display()),
            self.hermes.diagnostics(LOG_LINES_ON_FAILURE),
            self.fake_llm.diagnostics(LOG_LINES_ON_FAILURE),
        ]
        .join("\n")
    }
}

impl Drop for HermesUpstream {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.diagnostics());
        }
    }
}

/// The virtual environment holding Hermes.
fn hermes_venv() -> PathBuf {
    if let Some(venv) = std::env::var_os("IRIS_HERMES_VENV").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(venv);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home)
        .join(".cache")
        .join("iris-cluster")
        .join(format!("hermes-{HERMES_VERSION}-venv"))
}

/// `$HERMES_HOME/config.yaml`: the fake LLM as the model, manual approvals (no auxiliary
/// LLM judging commands), no tirith download, a local terminal in `workdir`, and the API
/// server on `addr`. Strings are JSON-quoted, which YAML reads as double-quoted scalars.
fn hermes_config(llm_addr: SocketAddr, addr: SocketAddr, workdir: &Path) -> String {
    let quoted = |text: &str| Value::from(text).to_string();
    let base_url = quoted(&format!("http://{llm_addr}/v1"));
    let cwd = quoted(&workdir.to_string_lossy());
    let port = addr.port();
    format!(
        "model:\n  provider: custom\n  default: fake-model\n  base_url: {base_url}\n  \
         api_key: sk-fake-local-not-secret\n  context_length: 200000\n\
         approvals:\n  mode: manual\n  timeout: 120\n\
         security:\n  tirith_enabled: false\n\
         terminal:\n  backend: local\n  cwd: {cwd}\n\
         platforms:\n  api_server:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      \
         port: {port}\n"
    )
}

/// The few variables Hermes gets from the test's environment; everything else (provider
/// keys, `HERMES_*`, proxies) is left out so the fixture behaves the same on every machine.
fn passed_through_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = ["PATH", "HOME", "TMPDIR", "USER", "LOGNAME"]
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
        .collect();
    env.push(("LANG".to_owned(), "C.UTF-8".to_owned()));
    env
}

/// A fresh 32-hex-digit API key (the std hasher's random keys; no `rand` needed).
fn random_api_key() -> String {
    let word = || {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.as_nanos())
                .unwrap_or_default(),
        );
        hasher.finish()
    };
    format!("iris-e2e-{:016x}{:016x}", word(), word())
}

fn create_dir(dir: &Path) {
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
}

fn write_file(path: &Path, text: &str) {
    std::fs::write(path, text)
        .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the generated config names the fake LLM, the port and quotes the folder.
    #[test]
    fn the_hermes_config_points_at_the_fake_llm_and_the_api_port() {
        let llm = SocketAddr::from(([127, 0, 0, 1], 1111));
        let api = SocketAddr::from(([127, 0, 0, 1], 2222));
        let config = hermes_config(llm, api, Path::new("/tmp/a b"));
        assert!(config.contains("base_url: \"http://127.0.0.1:1111/v1\""));
        assert!(config.contains("cwd: \"/tmp/a b\""));
        assert!(config.contains("port: 2222"));
        assert!(config.contains("mode: manual"));
    }

    /// Proves API keys are long enough for Hermes and differ between upstreams.
    #[test]
    fn api_keys_are_long_and_fresh() {
        let (first, second) = (random_api_key(), random_api_key());
        assert!(first.len() >= 16);
        assert_ne!(first, second);
    }
}
