//! A minimal HTTP/1.1 client over a tokio `TcpStream` (`Connection: close`), enough to
//! probe `/readyz`, `/healthz` and `/metrics` and to call the server API, without an HTTP
//! client crate.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

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
    tokio::time::timeout(PROBE_TIMEOUT, get_without_timeout(addr, path))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("GET {path} timed out")))?
}

async fn get_without_timeout(addr: SocketAddr, path: &str) -> io::Result<HttpResponse> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    parse_response(&String::from_utf8_lossy(&raw))
}

/// `method path` with an optional bearer token and JSON body.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    json_body: Option<&str>,
) -> io::Result<HttpResponse> {
    request_with_headers(addr, method, path, bearer, json_body, &[]).await
}

/// [`request`] with extra headers (`name`, `value`).
pub async fn request_with_headers(
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
        parse_response(&String::from_utf8_lossy(&raw))
    };
    tokio::time::timeout(PROBE_TIMEOUT, call)
        .await
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{method} {path} timed out"),
            )
        })?
}

fn parse_response(text: &str) -> io::Result<HttpResponse> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad HTTP response {text:?}"),
        )
    };
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(bad)?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(bad)?;
    Ok(HttpResponse {
        status,
        body: body.to_owned(),
    })
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
