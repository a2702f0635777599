//! Raw HTTP/1.1 over TCP for hostile requests: the bytes exactly as a test writes them (no
//! client library to normalize a path or refuse a header), optionally from a chosen
//! loopback source address (Linux routes all of 127/8 locally, so `127.0.0.2` is another
//! client), and what came back: the status, the body so far, and whether the server
//! closed the connection.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// How long one exchange may wait for the server.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the server answered to one raw request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawAnswer {
    /// The status code of the answer.
    pub status: u16,
    /// Everything after the answer's head that arrived before the connection closed (or,
    /// for a `101`, nothing: the socket is a WebSocket then).
    pub body: Vec<u8>,
    /// The server closed the connection after answering.
    pub closed: bool,
}

/// A TCP connection to `server`, from `source` when given (any free port of it).
pub async fn connect_from(source: Option<IpAddr>, server: SocketAddr) -> io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    if let Some(source) = source {
        socket.bind(SocketAddr::new(source, 0))?;
    }
    socket.connect(server).await
}

/// A `GET /ws` upgrade head with a valid key, `extra` header lines (each ending in CRLF)
/// added before the blank line.
pub fn upgrade_head(server: SocketAddr, extra: &str) -> String {
    format!(
        "GET /ws HTTP/1.1\r\nHost: {server}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    )
}

/// Writes `request` on a new connection to `server` and reads the answer.
pub async fn exchange(server: SocketAddr, request: &[u8]) -> io::Result<RawAnswer> {
    exchange_from(None, server, request).await
}

/// [`exchange`] from the loopback address `source`.
pub async fn exchange_from(
    source: Option<IpAddr>,
    server: SocketAddr,
    request: &[u8],
) -> io::Result<RawAnswer> {
    let mut stream = connect_from(source, server).await?;
    // A server may answer and close before a long request is all written: the answer
    // still counts.
    let _ = stream.write_all(request).await;
    read_answer(&mut stream).await
}

/// Reads one answer from `stream`: its head, then for anything but `101` whatever follows
/// until the server closes (or [`EXCHANGE_TIMEOUT`] passes, leaving `closed` false).
pub async fn read_answer(stream: &mut TcpStream) -> io::Result<RawAnswer> {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = raw.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        let read = tokio::time::timeout(EXCHANGE_TIMEOUT, stream.read(&mut chunk))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no answer"))?;
        match read {
            Ok(0) | Err(_) if raw.is_empty() => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "closed without an answer",
                ))
            }
            Ok(0) | Err(_) => return Err(io::Error::other("closed inside the answer's head")),
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no status in {head:?}")))?;
    if status == 101 {
        return Ok(RawAnswer {
            status,
            body: Vec::new(),
            closed: false,
        });
    }
    let mut body = raw[head_end..].to_vec();
    let closed = loop {
        match tokio::time::timeout(EXCHANGE_TIMEOUT, stream.read(&mut chunk)).await {
            Err(_) => break false,
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => body.extend_from_slice(&chunk[..n]),
        }
    };
    Ok(RawAnswer {
        status,
        body,
        closed,
    })
}
