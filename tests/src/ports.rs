//! Free local TCP ports for the servers a test starts.
//!
//! Ports come from below the kernel's ephemeral range (32768 and up on Linux): a port
//! the OS handed out for a throwaway listener can be taken, between the check and the
//! server's own bind, by any outgoing connection of a busy test run, and a node that
//! cannot listen exits. Below that range only a listener can take a port, and each
//! process walks its own stretch of it, so two tests never get the same one.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The first port handed out (above the well-known and common service ports).
const FIRST: u32 = 20_000;
/// One past the last port handed out: where the ephemeral range starts.
const END: u32 = 32_768;
/// How far apart two processes start walking the range.
const STRIDE: u32 = 997;

/// How many ports this process has looked at so far.
static TRIED: AtomicU32 = AtomicU32::new(0);

/// A port on 127.0.0.1 that no listener holds and no other caller in this process got.
pub fn free_port() -> u16 {
    let span = END - FIRST;
    let start = std::process::id().wrapping_mul(STRIDE) % span;
    for _ in 0..span {
        let step = TRIED.fetch_add(1, Ordering::Relaxed);
        let port = FIRST + (start + step) % span;
        if TcpListener::bind(("127.0.0.1", port as u16)).is_ok() {
            return port as u16;
        }
    }
    panic!("no free port between {FIRST} and {END}");
}
