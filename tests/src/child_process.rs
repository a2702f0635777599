//! A child process whose stdout and stderr go to one log file and which is killed with
//! SIGKILL when dropped, so no test leaks processes, whatever way it ends.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

/// A running (or killed) child process.
#[derive(Debug)]
pub struct ChildProcess {
    name: String,
    child: Child,
    log_path: PathBuf,
}

impl ChildProcess {
    /// Starts `command`, logging to `<log_dir>/<name>.log`.
    pub fn spawn(name: &str, mut command: Command, log_dir: &Path) -> Self {
        let log_path = log_dir.join(format!("{name}.log"));
        let log = File::create(&log_path)
            .unwrap_or_else(|err| panic!("cannot create {}: {err}", log_path.display()));
        let log_for_stderr = log.try_clone().expect("duplicating a log file handle");
        let child = command
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_for_stderr)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {name} ({command:?}): {err}"));
        Self {
            name: name.to_owned(),
            child,
            log_path,
        }
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory now (KiB), from `/proc/<pid>/status`.
    pub fn rss_kib(&self) -> u64 {
        resident_kib(self.pid()).unwrap_or_else(|| panic!("no VmRSS for {}", self.name))
    }

    /// The name the process was started under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Kills the process with SIGKILL (a crash, no clean shutdown) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Asks the process to stop (SIGTERM: an orderly shutdown).
    pub fn terminate(&mut self) {
        self.signal("TERM");
    }

    /// Sends the process signal `name` (`TERM`, `STOP`, `CONT`, ...) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status();
        assert!(
            status.is_ok_and(|status| status.success()),
            "kill -{name} {} ({}) failed",
            self.child.id(),
            self.name
        );
    }

    /// The exit status, if the process has ended.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Where its output goes.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Its whole output so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// The last `lines` lines of its output.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Its path, status and last log lines, for a failure report.
    pub fn diagnostics(&mut self, lines: usize) -> String {
        let status = match self.exit_status() {
            Some(status) => format!("exited: {status}"),
            None => "running".to_owned(),
        };
        format!(
            "--- {} ({status}), log {} ---\n{}",
            self.name,
            self.log_path.display(),
            self.log_tail(lines)
        )
    }
}

/// Resident memory of process `pid` now (KiB, `VmRSS` in `/proc/<pid>/status`), if it
/// still runs.
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
