//! The gateway's sockets: the public listener (`IRIS_LISTEN`: WebSockets, the web client,
//! probes) and, when `IRIS_INTERNAL_LISTEN` is set, the internal one (`/metrics`, the server
//! API, probes). Both are bound before anything starts, so a bad address is reported as
//! that and nothing half-started is torn down.

use std::net::{SocketAddr, TcpListener};

use anyhow::Context as _;

use crate::config::GatewayArgs;

/// The bound sockets.
pub struct Listeners {
    /// `IRIS_LISTEN`.
    pub public: TcpListener,
    /// `IRIS_INTERNAL_LISTEN`, when set.
    pub internal: Option<TcpListener>,
}

impl Listeners {
    /// Binds `IRIS_LISTEN`, then `IRIS_INTERNAL_LISTEN` if set, refusing an internal
    /// address that is the public one (the API would then be public after all).
    pub fn bind(gateway: &GatewayArgs) -> anyhow::Result<Self> {
        let public = TcpListener::bind(&gateway.listen)
            .with_context(|| format!("cannot listen on {}", gateway.listen))?;
        let Some(internal_addr) = gateway.internal_listen else {
            return Ok(Self {
                public,
                internal: None,
            });
        };
        let public_addr = public.local_addr()?;
        if overlaps(public_addr, internal_addr) {
            anyhow::bail!(
                "IRIS_INTERNAL_LISTEN ({internal_addr}) must be another address than \
                 IRIS_LISTEN ({}): it keeps /metrics and /api/v1 off the public listener",
                gateway.listen
            );
        }
        let internal = TcpListener::bind(internal_addr)
            .with_context(|| format!("cannot listen on {internal_addr} (IRIS_INTERNAL_LISTEN)"))?;
        Ok(Self {
            public,
            internal: Some(internal),
        })
    }
}

/// Whether a socket bound to `internal` would take connections meant for `public`: the same
/// port on the same address, or on every address.
fn overlaps(public: SocketAddr, internal: SocketAddr) -> bool {
    internal.port() != 0
        && public.port() == internal.port()
        && (public.ip() == internal.ip()
            || public.ip().is_unspecified()
            || internal.ip().is_unspecified())
}

#[cfg(test)]
mod tests {
    use super::overlaps;

    fn addr(text: &str) -> std::net::SocketAddr {
        text.parse().expect("a socket address")
    }

    #[test]
    fn the_same_port_overlaps_on_the_same_or_every_address() {
        assert!(overlaps(addr("127.0.0.1:8080"), addr("127.0.0.1:8080")));
        assert!(overlaps(addr("0.0.0.0:8080"), addr("127.0.0.1:8080")));
        assert!(overlaps(addr("127.0.0.1:8080"), addr("0.0.0.0:8080")));
    }

    #[test]
    fn another_port_or_address_does_not_overlap() {
        assert!(!overlaps(addr("0.0.0.0:8080"), addr("0.0.0.0:9090")));
        assert!(!overlaps(addr("10.0.0.1:8080"), addr("127.0.0.1:8080")));
        assert!(!overlaps(addr("127.0.0.1:8080"), addr("127.0.0.1:0")));
    }
}
