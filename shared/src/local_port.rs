//! Free loopback ports for a process that starts local servers on the spot (the load
//! generator's own cluster, test servers).
//!
//! Ports come from below the kernel's ephemeral range (32768 and up on Linux): a port the
//! OS handed out for a throwaway listener can be handed out again at once, or taken by any
//! outgoing connection, between the check and the server's own bind, and the server then
//! fails to start or two of them share a port. Below that range only a listener can take
//! a port, and each process walks its own stretch of it, so two callers in one process
//! never get the same one.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The first port handed out (above the well-known and common service ports).
const FIRST: u32 = 10_000;
/// One past the last port handed out: where the ephemeral range starts.
const END: u32 = 32_768;
/// How far apart two processes start walking the range.
const STRIDE: u32 = 997;

/// How many ports this process has looked at so far.
static TRIED: AtomicU32 = AtomicU32::new(0);

/// A port on 127.0.0.1 that no listener holds and no earlier caller in this process got;
/// `None` when every port of the range is taken.
pub fn free_loopback_port() -> Option<u16> {
    let span = END - FIRST;
    let start = std::process::id().wrapping_mul(STRIDE) % span;
    (0..span).find_map(|_| {
        let port = (FIRST + (start + TRIED.fetch_add(1, Ordering::Relaxed)) % span) as u16;
        TcpListener::bind(("127.0.0.1", port)).ok().map(|_| port)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_bindable_and_below_the_ephemeral_range() {
        let ports: Vec<u16> = (0..50).map(|_| free_loopback_port().unwrap()).collect();
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ports.len());
        for port in ports {
            assert!((FIRST..END).contains(&u32::from(port)));
            TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
        }
    }
}
