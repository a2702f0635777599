//! A private `redis-server` per test, on a free port, without persistence; killed on drop.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::child_process::ChildProcess;
use crate::ports::free_port;
use crate::resp::{self, Reply};

/// Where the Debian package installs the server.
const REDIS_SERVER: &str = "/usr/bin/redis-server";
/// How long a fresh server may take to answer PING.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running Redis owned by one test.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    process: ChildProcess,
}

impl RedisServer {
    /// Starts a server on a free port (logging into `log_dir`) and waits until it answers PING.
    pub fn start(log_dir: &Path) -> Self {
        assert!(
            Path::new(REDIS_SERVER).is_file(),
            "{REDIS_SERVER} is missing: run `scripts/install-deps.sh` to install redis-server"
        );
        let port = free_port();
        let mut command = Command::new(REDIS_SERVER);
        command.args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]);
        let mut server = Self {
            port,
            process: ChildProcess::spawn("redis", command, log_dir),
        };
        server.wait_until_answering();
        server
    }

    fn wait_until_answering(&mut self) {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        while Instant::now() < deadline {
            if self.answers_ping() {
                return;
            }
            if self.process.exit_status().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "redis-server on port {} did not answer PING\n{}",
            self.port,
            self.process.diagnostics(30)
        );
    }

    /// Whether the server answers PING right now.
    pub fn answers_ping(&self) -> bool {
        matches!(self.command(&["PING"]), Ok(Reply::Text(pong)) if pong == "PONG")
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The `IRIS_REDIS_URL` for it.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Runs one command (name first).
    pub fn command(&self, args: &[&str]) -> std::io::Result<Reply> {
        resp::command(self.port, args)
    }

    /// Kills the server (SIGKILL).
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// The process, for diagnostics.
    pub fn process_mut(&mut self) -> &mut ChildProcess {
        &mut self.process
    }
}
