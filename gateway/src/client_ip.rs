//! Which address a WebSocket connection counts against for per-IP limits: the socket's
//! peer, or, when the gateway is told it is behind a proxy, the address that proxy put
//! last in `X-Forwarded-For`. Earlier entries are whatever the client claimed and are
//! never trusted.

use std::net::IpAddr;

use actix_web::HttpRequest;

/// The client address of `req`; `None` when it cannot be known (no peer address, e.g. in
/// tests on a non-TCP transport).
pub fn client_ip(req: &HttpRequest, trust_forwarded_for: bool) -> Option<IpAddr> {
    if trust_forwarded_for {
        let forwarded = req
            .headers()
            .get_all("x-forwarded-for")
            .filter_map(|value| value.to_str().ok())
            .collect::<Vec<_>>()
            .join(",");
        if let Some(ip) = last_forwarded_address(&forwarded) {
            return Some(ip);
        }
    }
    req.peer_addr().map(|addr| addr.ip())
}

/// The last parseable address of an `X-Forwarded-For` value (`client, proxy1, proxy2`).
fn last_forwarded_address(header: &str) -> Option<IpAddr> {
    header
        .rsplit(',')
        .map(str::trim)
        .find(|entry| !entry.is_empty())
        .and_then(|entry| entry.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_the_proxy_added_last_is_the_client() {
        assert_eq!(
            last_forwarded_address("1.1.1.1, 203.0.113.7"),
            Some(IpAddr::from([203, 0, 113, 7]))
        );
        assert_eq!(
            last_forwarded_address("2001:db8::1"),
            "2001:db8::1".parse().ok()
        );
        assert_eq!(last_forwarded_address("1.1.1.1, garbage"), None);
        assert_eq!(last_forwarded_address(""), None);
    }
}
