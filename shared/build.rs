//! Build script of `iris_shared`: names the commit the binaries were built from
//! (`IRIS_BUILD_COMMIT`, read by `metrics::build_info`).
//!
//! An explicit `IRIS_BUILD_COMMIT` wins (image builds have no `.git`); otherwise the short
//! hash of `HEAD`, or `unknown` outside a Git checkout. It reruns when `HEAD` moves (the
//! branch's ref or the packed refs change), not on every build.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// Reruns when `path` changes; a missing file would make Cargo rerun on every build.
fn watch(path: &str) {
    if Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=IRIS_BUILD_COMMIT");
    let commit = match std::env::var("IRIS_BUILD_COMMIT") {
        Ok(commit) if !commit.trim().is_empty() => commit.trim().to_owned(),
        _ => {
            if let Some(git_dir) = git(&["rev-parse", "--path-format=absolute", "--git-dir"]) {
                watch(&format!("{git_dir}/HEAD"));
                if let (Some(common), Some(branch)) = (
                    git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
                    git(&["symbolic-ref", "-q", "HEAD"]),
                ) {
                    watch(&format!("{common}/{branch}"));
                    watch(&format!("{common}/packed-refs"));
                }
            }
            git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_owned())
        }
    };
    // It becomes a label value: keep it to characters that need no escaping.
    let commit: String = commit
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "._-+".contains(*c))
        .collect();
    println!("cargo:rustc-env=IRIS_BUILD_COMMIT={commit}");
}
