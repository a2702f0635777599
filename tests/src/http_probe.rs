//! A minimal HTTP/1.1 client over a tokio `TcpStream` (`Connection: close`, a chunked
//! body decoded), enough to probe `/readyz`, `/healthz` and `/metrics`, to call the server
//! API and to speak to Hermes, without an HTTP client crate.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// An HTTP response: status code and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The body (the whole payload after the headers; the server closes the connection).
    pub body: String,
}

/// `GET path` from `addr`.
pub async fn get(addr: SocketAddr, path: &str) -> io::Result<HttpResponse> {
    request(addr, "GET", path, None, None).await
}

/// `method path` with an optional bearer token and JSON body.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    json_body: Option<&str>,
) -> io::Result<HttpResponse> {
    request_within(PROBE_TIMEOUT, addr, method, path, bearer, json_body, &[]).await
}

/// [`request`] with extra headers (`name`, `value`), allowed `timeout` (an event stream
/// lasting a whole agent turn needs more than [`PROBE_TIMEOUT`]).
pub async fn request_within(
    timeout: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    json_body: Option<&str>,
    headers: &[(&str, &str)],
) -> io::Result<HttpResponse> {
    let call = async {
        let mut stream = TcpStream::connect(addr).await?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
        if let Some(token) = bearer {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let body = json_body.unwrap_or_default();
        if json_body.is_some() {
            head.push_str("Content-Type: application/json\r\n");
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        parse_response(&raw)
    };
    tokio::time::timeout(timeout, call).await.map_err(|_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{method} {path} timed out"),
        )
    })?
}

/// Splits a whole HTTP/1.1 response into status and body, decoding a chunked body.
fn parse_response(raw: &[u8]) -> io::Result<HttpResponse> {
    let bad = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what}: {:?}", String::from_utf8_lossy(raw)),
        )
    };
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| bad("no status code"))?;
    let chunked = head.lines().any(|line| {
        let line = line.to_ascii_lowercase();
        line.starts_with("transfer-encoding:") && line.contains("chunked")
    });
    let body = if chunked {
        dechunk(body).ok_or_else(|| bad("bad chunked body"))?
    } else {
        body.to_vec()
    };
    Ok(HttpResponse {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Decodes a `Transfer-Encoding: chunked` body (up to its last chunk, or the end of data).
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|window| window == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size_hex = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_hex, 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..).unwrap_or_default();
        if rest.is_empty() {
            return Some(body);
        }
    }
}

/// Polls `GET path` until it answers `status`; panics with the last answer after `within`.
pub async fn wait_for_status(
    addr: SocketAddr,
    path: &str,
    status: u16,
    within: std::time::Duration,
) {
    let deadline = std::time::Instant::now() + within;
    let mut last = None;
    while std::time::Instant::now() < deadline {
        match get(addr, path).await {
            Ok(response) if response.status == status => return,
            other => last = Some(other),
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("{path} never answered {status} within {within:?}; last: {last:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves a chunked HTTP body is decoded across chunk boundaries.
    #[test]
    fn chunked_bodies_are_decoded_across_chunk_boundaries() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                    6\r\ndata: \r\n4\r\n{}\n\n\r\n0\r\n\r\n";
        let response = parse_response(raw).expect("a valid response");
        assert_eq!(response.status, 200);
        assert_eq!(response.body, "data: {}\n\n");
    }
}
