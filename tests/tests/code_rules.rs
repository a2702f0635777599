//! The code rules ARCHITECTURE.md states, checked on the tree: Redis is spoken only by
//! `shared` (no production file of `gateway` or `worker` names a raw Redis command), no
//! production file is longer than 500 lines, and every Rust file opens with `//!` saying
//! what it owns.

use std::fs;
use std::path::{Path, PathBuf};

/// Longest a production file may be.
const MAX_PRODUCTION_LINES: usize = 500;
/// What naming a Redis command by hand looks like.
const RAW_REDIS: &[&str] = &[
    "redis::cmd",
    "redis::pipe",
    "redis::Script",
    "Script::new",
    "redis::Cmd",
    "redis::Pipeline",
    "query_async",
    "AsyncCommands",
];
/// Crates whose production code must leave Redis to `shared`.
const REDIS_FREE_CRATES: &[&str] = &["gateway", "worker"];
/// Crates whose sources are the project's own.
const OWN_CRATES: &[&str] = &["gateway", "worker", "shared", "tests", "bench", "fuzz"];
/// Crates whose `src/` is production code.
const PRODUCTION_CRATES: &[&str] = &["gateway", "worker", "shared"];

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    file: PathBuf,
    rule: String,
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name == "target") {
                continue;
            }
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// Whether `path` (relative to a crate's `src/`) holds tests rather than production code.
fn is_test_file(path: &Path) -> bool {
    path.components().any(|part| part.as_os_str() == "tests")
        || path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .is_some_and(|stem| stem == "tests" || stem.ends_with("_tests"))
}

/// The production part of a source file: everything before its `#[cfg(test)]` module.
fn production_part(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod ")
        .map_or(text, |at| &text[..at])
}

/// Every rule broken in the workspace at `root`.
fn violations(root: &Path) -> Vec<Violation> {
    let mut broken = Vec::new();
    let mut report = |file: &Path, rule: String| {
        broken.push(Violation {
            file: file.strip_prefix(root).unwrap_or(file).to_owned(),
            rule,
        })
    };
    for krate in OWN_CRATES {
        for file in rust_files(&root.join(krate)) {
            let text = fs::read_to_string(&file).unwrap_or_default();
            if !text.starts_with("//!") {
                report(
                    &file,
                    "does not open with a `//!` line saying what it owns".into(),
                );
            }
        }
    }
    for krate in PRODUCTION_CRATES {
        let src = root.join(krate).join("src");
        for file in rust_files(&src) {
            if is_test_file(file.strip_prefix(&src).unwrap_or(&file)) {
                continue;
            }
            let text = fs::read_to_string(&file).unwrap_or_default();
            let lines = text.lines().count();
            if lines > MAX_PRODUCTION_LINES {
                report(
                    &file,
                    format!("{lines} lines (at most {MAX_PRODUCTION_LINES})"),
                );
            }
            if !REDIS_FREE_CRATES.contains(krate) {
                continue;
            }
            for (number, line) in production_part(&text).lines().enumerate() {
                if let Some(raw) = RAW_REDIS.iter().find(|raw| line.contains(*raw)) {
                    let why = format!(
                        "line {}: names raw Redis (`{raw}`); give the record a typed function in `shared`",
                        number + 1
                    );
                    report(&file, why);
                }
            }
        }
    }
    broken
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_owned()
}

#[test]
fn the_tree_keeps_redis_in_shared_files_short_and_every_file_documented() {
    let broken = violations(&workspace_root());
    assert!(
        broken.is_empty(),
        "code rules broken (ARCHITECTURE.md, invariants):\n{}",
        broken
            .iter()
            .map(|v| format!("  {}: {}", v.file.display(), v.rule))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_check_reports_raw_redis_long_files_and_missing_docs_but_not_tests_or_shared() {
    let root = std::env::temp_dir().join(format!("iris-code-rules-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    let raw = "//! Raw.\nasync fn f() { redis::cmd(\"PING\").query_async(c).await }\n";
    write("gateway/src/raw.rs", raw);
    write("shared/src/store.rs", raw);
    write("worker/src/push/tests/mod.rs", raw);
    write(
        "worker/src/inline.rs",
        "//! Inline test module.\n#[cfg(test)]\nmod tests { fn t() { redis::pipe(); } }\n",
    );
    write("worker/src/undocumented.rs", "fn f() {}\n");
    let long: String = std::iter::once("//! Long.\n".to_owned())
        .chain((0..MAX_PRODUCTION_LINES).map(|n| format!("const C{n}: u8 = 0;\n")))
        .collect();
    write("shared/src/long.rs", &long);
    write("tests/tests/long_test.rs", &long);

    let broken = violations(&root);
    let files: Vec<String> = broken
        .iter()
        .map(|v| v.file.display().to_string())
        .collect();
    assert!(
        broken
            .iter()
            .any(|v| v.file.ends_with("gateway/src/raw.rs") && v.rule.contains("redis::cmd")),
        "{broken:#?}"
    );
    assert!(
        broken
            .iter()
            .any(|v| v.file.ends_with("worker/src/undocumented.rs") && v.rule.contains("//!")),
        "{broken:#?}"
    );
    assert!(
        broken
            .iter()
            .any(|v| v.file.ends_with("shared/src/long.rs") && v.rule.contains("501 lines")),
        "{broken:#?}"
    );
    for allowed in [
        "shared/src/store.rs",
        "worker/src/push/tests/mod.rs",
        "worker/src/inline.rs",
        "tests/tests/long_test.rs",
    ] {
        assert!(
            !files.iter().any(|f| f.ends_with(allowed)),
            "{allowed}: {broken:#?}"
        );
    }
    fs::remove_dir_all(&root).unwrap();
}
