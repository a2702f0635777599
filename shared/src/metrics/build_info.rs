//! `iris_build_info{version, commit} 1`: which build a node runs, for dashboards and for
//! telling a half-finished rollout apart (the commit comes from `build.rs`).

use std::fmt::Write as _;

use opentelemetry::KeyValue;

/// The release, shared by every crate of the workspace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The short commit hash built from, `IRIS_BUILD_COMMIT` if the build set it, or `unknown`.
pub const COMMIT: &str = env!("IRIS_BUILD_COMMIT");

const NAME: &str = "iris_build_info";
const HELP: &str =
    "Always 1; its labels name the release (version) and commit of the running binary.";

/// Appends the series to a Prometheus page.
pub fn render(out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP {NAME} {HELP}\n# TYPE {NAME} gauge\n{NAME}{{version=\"{VERSION}\",commit=\"{COMMIT}\"}} 1"
    );
}

/// Reports the same series through `meter`.
pub fn register(meter: &opentelemetry::metrics::Meter) {
    meter
        .u64_observable_gauge(NAME)
        .with_description(HELP)
        .with_callback(|observer| {
            observer.observe(
                1,
                &[
                    KeyValue::new("version", VERSION),
                    KeyValue::new("commit", COMMIT),
                ],
            )
        })
        .build();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_is_named_by_version_and_a_commit() {
        let mut page = String::new();
        render(&mut page);
        assert!(page.contains(&format!("iris_build_info{{version=\"{VERSION}\",commit=")));
        assert!(!COMMIT.is_empty() && !COMMIT.contains('"'), "{COMMIT}");
    }
}
