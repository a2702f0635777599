//! Free local TCP ports, found by letting the OS pick one for a throwaway listener.

use std::net::TcpListener;

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("binding 127.0.0.1:0")
        .port()
}
