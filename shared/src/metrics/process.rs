//! The standard Prometheus process series (`process_resident_memory_bytes`,
//! `process_cpu_seconds_total`, `process_open_fds`, `process_max_fds`,
//! `process_start_time_seconds`), read from `/proc`
//! when rendered or collected: what benchmarks and capacity alerts divide by connections.

use std::fmt::Write as _;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, fixed by the Linux ABI).
const USER_HZ: f64 = 100.0;

/// One reading of the process's resources (fields are `None` off Linux).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct ProcessSample {
    /// Resident set size.
    pub resident_bytes: Option<u64>,
    /// User plus system CPU time.
    pub cpu_seconds: Option<f64>,
    /// Open file descriptors (sockets included).
    pub open_fds: Option<u64>,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<u64>,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: Option<f64>,
}

impl ProcessSample {
    /// Reads `/proc/self`.
    pub fn now() -> Self {
        Self {
            resident_bytes: resident_bytes(),
            cpu_seconds: cpu_seconds(),
            open_fds: std::fs::read_dir("/proc/self/fd")
                .ok()
                .map(|entries| entries.count() as u64),
            max_fds: max_fds(),
            start_time_seconds: start_time_seconds(),
        }
    }
}

fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Field `number` (1-based, as proc(5) counts them) of `/proc/self/stat`.
fn stat_field(number: usize) -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at state (field 3).
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.split_whitespace().nth(number - 3)?.parse().ok()
}

fn cpu_seconds() -> Option<f64> {
    // utime and stime.
    Some((stat_field(14)? + stat_field(15)?) / USER_HZ)
}

fn start_time_seconds() -> Option<f64> {
    // starttime counts ticks since boot; btime is the boot time.
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: f64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(boot + stat_field(22)? / USER_HZ)
}

fn max_fds() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Appends the process series to a Prometheus page.
pub fn render(out: &mut String) {
    let sample = ProcessSample::now();
    let mut series = |name: &str, kind: &str, help: &str, value: Option<String>| {
        if let Some(value) = value {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
    };
    series(
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size in bytes.",
        sample.resident_bytes.map(|v| v.to_string()),
    );
    series(
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
        sample.cpu_seconds.map(|v| v.to_string()),
    );
    series(
        "process_open_fds",
        "gauge",
        "Number of open file descriptors.",
        sample.open_fds.map(|v| v.to_string()),
    );
    series(
        "process_max_fds",
        "gauge",
        "Maximum number of open file descriptors.",
        sample.max_fds.map(|v| v.to_string()),
    );
    series(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        sample.start_time_seconds.map(|v| v.to_string()),
    );
}

/// Reports the same series through `meter`.
pub fn register(meter: &opentelemetry::metrics::Meter) {
    meter
        .u64_observable_gauge("process_resident_memory_bytes")
        .with_description("Resident memory size in bytes.")
        .with_unit("By")
        .with_callback(|observer| {
            if let Some(value) = resident_bytes() {
                observer.observe(value, &[]);
            }
        })
        .build();
    meter
        .f64_observable_counter("process_cpu_seconds_total")
        .with_description("Total user and system CPU time spent in seconds.")
        .with_unit("s")
        .with_callback(|observer| {
            if let Some(value) = cpu_seconds() {
                observer.observe(value, &[]);
            }
        })
        .build();
    meter
        .u64_observable_gauge("process_open_fds")
        .with_description("Number of open file descriptors.")
        .with_callback(|observer| {
            if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
                observer.observe(entries.count() as u64, &[]);
            }
        })
        .build();
    meter
        .f64_observable_gauge("process_start_time_seconds")
        .with_description("Start time of the process since unix epoch in seconds.")
        .with_unit("s")
        .with_callback(|observer| {
            if let Some(value) = start_time_seconds() {
                observer.observe(value, &[]);
            }
        })
        .build();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_cpu_time_and_descriptors() {
        let sample = ProcessSample::now();
        assert!(sample.resident_bytes.unwrap() > 1024 * 1024);
        assert!(sample.cpu_seconds.unwrap() >= 0.0);
        assert!(sample.open_fds.unwrap() >= 3);
        assert!(sample.max_fds.unwrap() >= sample.open_fds.unwrap());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let started = sample.start_time_seconds.unwrap();
        assert!(
            started <= now + 1.0 && started > now - 86_400.0,
            "{started} vs {now}"
        );
        let mut page = String::new();
        render(&mut page);
        assert!(page.contains("# TYPE process_cpu_seconds_total counter\n"));
    }
}
