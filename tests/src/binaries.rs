//! Finds the `iris-gateway` and `iris-worker` binaries that `cargo build` produced. The
//! harness never builds them itself: tests run against exactly what is on disk.

use std::path::{Path, PathBuf};

/// Name of the gateway binary.
pub const GATEWAY: &str = "iris-gateway";
/// Name of the worker binary.
pub const WORKER: &str = "iris-worker";

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// `$CARGO_TARGET_DIR` (relative paths taken from the workspace root), else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
}

/// Path of the debug build of binary `name`; panics with what to do if it is missing.
pub fn binary(name: &str) -> PathBuf {
    let path = target_dir().join("debug").join(name);
    assert!(
        path.is_file(),
        "{name} not found at {}: run `cargo build` first (the tests never build the binaries)",
        path.display()
    );
    path
}
