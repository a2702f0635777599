//! Free local TCP ports for the servers a test starts (see `iris_shared::local_port` for
//! why they come from below the ephemeral range), and port pairs for Redis Cluster nodes,
//! which also listen on a cluster bus port 10000 above their own.
//!
//! Every port handed out is remembered, so a single port and a cluster node's bus port
//! never coincide within a process; across processes both walks start at a place set by
//! the process id, as `iris_shared::local_port` does.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// How far above its port a Redis Cluster node listens for its peers.
pub const CLUSTER_BUS_OFFSET: u16 = 10_000;
/// The first cluster node port handed out (as `iris_shared::local_port` starts).
const CLUSTER_FIRST: u32 = 10_000;
/// One past the last cluster node port: its bus port must stay below the ephemeral range
/// (32768 and up), where an outgoing connection could take it before the node binds it.
const CLUSTER_END: u32 = 32_768 - CLUSTER_BUS_OFFSET as u32;
/// How far apart two processes start walking the range (as `iris_shared::local_port`).
const STRIDE: u32 = 997;

/// How many cluster node ports this process has looked at so far.
static CLUSTER_TRIED: AtomicU32 = AtomicU32::new(0);
/// Every port this process handed out, single or bus.
static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// Records `ports` as handed out if none of them was; whether they were all new.
fn claim(ports: &[u16]) -> bool {
    let mut guard = HANDED_OUT
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let taken = guard.get_or_insert_with(HashSet::new);
    if ports.iter().any(|port| taken.contains(port)) {
        return false;
    }
    taken.extend(ports);
    true
}

fn bindable(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A port on 127.0.0.1 that no listener holds and no other test of this process got.
pub fn free_port() -> u16 {
    loop {
        let port =
            iris_shared::local_port::free_loopback_port().expect("no free loopback port left");
        if claim(&[port]) {
            return port;
        }
    }
}

/// A port P for a Redis Cluster node such that P and its bus port P + 10000 are both free
/// on 127.0.0.1 and neither went to another test of this process.
pub fn free_cluster_port() -> u16 {
    let span = CLUSTER_END - CLUSTER_FIRST;
    let start = std::process::id().wrapping_mul(STRIDE) % span;
    (0..span)
        .find_map(|_| {
            let tried = CLUSTER_TRIED.fetch_add(1, Ordering::Relaxed);
            let port = (CLUSTER_FIRST + (start + tried) % span) as u16;
            let bus = port + CLUSTER_BUS_OFFSET;
            (bindable(port) && bindable(bus) && claim(&[port, bus])).then_some(port)
        })
        .expect("no free Redis Cluster port pair left")
}
