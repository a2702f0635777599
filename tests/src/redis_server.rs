//! A private `redis-server` per test, on a free port; killed on drop. By default without
//! persistence; [`RedisServer::start_durable`] runs it with AOF fsynced on every write in
//! a directory of its own, so it can be killed and restarted on the same port and data.
//! [`redis_server_command`] is the one place the harness names the binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::child_process::ChildProcess;
use crate::ports::free_port;
use crate::resp::{self, Reply};

/// Where the Debian package installs the server.
const REDIS_SERVER: &str = "/usr/bin/redis-server";
/// How long a fresh server may take to answer PING.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A command running `redis-server`, for servers and Sentinels alike; panics, saying how
/// to install it, if it is missing.
pub fn redis_server_command() -> Command {
    assert!(
        Path::new(REDIS_SERVER).is_file(),
        "{REDIS_SERVER} is missing: run `scripts/install-deps.sh` to install redis-server"
    );
    Command::new(REDIS_SERVER)
}

/// A running Redis owned by one test.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    name: String,
    args: Vec<String>,
    log_dir: PathBuf,
    process: ChildProcess,
}

impl RedisServer {
    /// Starts a server on a free port (logging into `log_dir`) and waits until it answers PING.
    pub fn start(log_dir: &Path) -> Self {
        Self::start_named("redis", log_dir, &["--save", "", "--appendonly", "no"])
    }

    /// Starts a server with `appendonly yes` and `appendfsync always`, its data in
    /// `<log_dir>/<name>-data`, so [`RedisServer::restart`] brings back every write it
    /// acknowledged.
    pub fn start_durable(name: &str, log_dir: &Path) -> Self {
        let data_dir = log_dir.join(format!("{name}-data"));
        std::fs::create_dir_all(&data_dir)
            .unwrap_or_else(|err| panic!("cannot create {}: {err}", data_dir.display()));
        let dir = data_dir.to_string_lossy().into_owned();
        let args = [
            "--dir",
            dir.as_str(),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
        ];
        Self::start_named(name, log_dir, &args)
    }

    /// Starts a server named `name` (its log file) with extra `args`.
    pub fn start_named(name: &str, log_dir: &Path, args: &[&str]) -> Self {
        Self::start_on(free_port(), name, log_dir, args)
    }

    /// Starts a server named `name` with extra `args` on `port`, which the caller picked
    /// (a Redis Cluster node needs its bus port free too).
    pub fn start_on(port: u16, name: &str, log_dir: &Path, args: &[&str]) -> Self {
        let mut all_args = vec![
            "--port".to_owned(),
            port.to_string(),
            "--bind".to_owned(),
            "127.0.0.1".to_owned(),
        ];
        // Every server keeps its files (an RDB made for a replica, say) in a directory of
        // its own: a file left in the working directory would be loaded by the next server
        // started there, with another test's keys.
        if !args.contains(&"--dir") {
            let data_dir = log_dir.join(format!("{name}-data"));
            std::fs::create_dir_all(&data_dir)
                .unwrap_or_else(|err| panic!("cannot create {}: {err}", data_dir.display()));
            all_args.push("--dir".to_owned());
            all_args.push(data_dir.to_string_lossy().into_owned());
        }
        all_args.extend(args.iter().map(|a| (*a).to_owned()));
        let process = Self::spawn(name, &all_args, log_dir);
        let mut server = Self {
            port,
            name: name.to_owned(),
            args: all_args,
            log_dir: log_dir.to_owned(),
            process,
        };
        server.wait_until_answering();
        server
    }

    fn spawn(name: &str, args: &[String], log_dir: &Path) -> ChildProcess {
        let mut command = redis_server_command();
        command.args(args);
        ChildProcess::spawn(name, command, log_dir)
    }

    /// Starts the server again on the same port with the same settings (and, for a
    /// durable one, the same data), killing it first if it still runs; waits for PING.
    /// Its earlier log is kept beside the new one.
    pub fn restart(&mut self) {
        self.process.kill();
        let old_log = self.process.log_path().to_owned();
        let _ = std::fs::rename(&old_log, old_log.with_extension("log.before-restart"));
        self.process = Self::spawn(&self.name, &self.args, &self.log_dir);
        self.wait_until_answering();
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

    /// Freezes the server (SIGSTOP): connections stay open but nothing is answered.
    pub fn freeze(&mut self) {
        self.process.signal("STOP");
    }

    /// Lets a frozen server run again (SIGCONT).
    pub fn thaw(&mut self) {
        self.process.signal("CONT");
    }

    /// The process, for diagnostics.
    pub fn process_mut(&mut self) -> &mut ChildProcess {
        &mut self.process
    }
}
