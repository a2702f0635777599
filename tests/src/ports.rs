//! Free local TCP ports for the servers a test starts (see `iris_shared::local_port` for
//! why they come from below the ephemeral range).

/// A port on 127.0.0.1 that no listener holds and no other test of this process got.
pub fn free_port() -> u16 {
    iris_shared::local_port::free_loopback_port().expect("no free loopback port left")
}
