//! Which request paths count as attempts to leave the served files: a `.` or `..` segment,
//! a backslash, a NUL, a `//` (an absolute path glued on) or a separator smuggled in
//! percent-encoded, judged on the path as sent and once decoded. The web client's files are
//! compiled into the binary, so no path can reach the disk; this names the attempts, so
//! that they are refused alike and counted.

use percent_encoding::percent_decode_str;

/// Whether `raw_path` (the request target's path, still percent-encoded) tries to traverse.
pub fn is_traversal(raw_path: &str) -> bool {
    let lowered = raw_path.to_ascii_lowercase();
    if ["%2f", "%5c", "%00"]
        .iter()
        .any(|encoded| lowered.contains(encoded))
    {
        return true;
    }
    let decoded = percent_decode_str(raw_path).decode_utf8_lossy();
    decoded.contains('\\')
        || decoded.contains('\0')
        || decoded.contains("//")
        || decoded
            .split('/')
            .any(|segment| matches!(segment, "." | ".."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_own_paths_are_not_traversal() {
        for path in [
            "/",
            "/app/app.js",
            "/app/style.css",
            "/ws",
            "/api/v1/tokens",
            "/app/",
        ] {
            assert!(!is_traversal(path), "{path}");
        }
    }

    #[test]
    fn dot_segments_backslashes_and_encoded_separators_are_traversal() {
        for path in [
            "/app/../Cargo.toml",
            "/app/./app.js",
            "/app/%2e%2e/Cargo.toml",
            "/app/%2E%2E/%2e%2e/etc/passwd",
            "/app/..%2f..%2fetc/passwd",
            "/app/..%5c..%5cCargo.toml",
            "/app/..\\..\\Cargo.toml",
            "/app//etc/passwd",
            "/app/%2fetc%2fpasswd",
            "/app/index.html%00.js",
            "/..",
        ] {
            assert!(is_traversal(path), "{path}");
        }
    }
}
