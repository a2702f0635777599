//! One spawned process of a benchmark cluster (Redis, a gateway, a worker): output to a log
//! file in the run's directory, SIGKILLed and reaped when dropped so no run leaks processes.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};

/// A running (or killed) child process.
pub struct NodeProcess {
    name: String,
    child: Child,
    log_path: PathBuf,
}

impl NodeProcess {
    /// Starts `command`, its stdout and stderr going to `<log_dir>/<name>.log`.
    pub fn spawn(name: &str, mut command: Command, log_dir: &Path) -> Result<Self> {
        let log_path = log_dir.join(format!("{name}.log"));
        let log =
            File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
        let log_for_stderr = log.try_clone()?;
        let child = command
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_for_stderr)
            .spawn()
            .with_context(|| format!("starting {name} ({command:?})"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            log_path,
        })
    }

    /// The name it was started under (its log file's stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (a crash: no cleanup), then reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The last `lines` lines of its log, for an error message.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        format!(
            "--- {} ({}) ---\n{}",
            self.name,
            self.log_path.display(),
            all[all.len().saturating_sub(lines)..].join("\n")
        )
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
