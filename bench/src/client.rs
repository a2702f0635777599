//! One device connection: open the WebSocket (from a spread of loopback source addresses,
//! so tens of thousands of sockets do not exhaust one address's ports), pair with `hello`,
//! `sync` from a cursor, send requests and read frames. Small socket buffers: the bench
//! holds up to ~19,000 of these.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use crate::cluster::Gateway;
use crate::frame_head::FrameHead;

/// How long pairing and `sync` may take before the connection counts as failed.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);
/// Loopback source addresses used in turn (127.0.0.2 onwards).
const SOURCE_ADDRESSES: usize = 200;

/// What reading the connection gave.
pub enum Incoming {
    Text(Utf8Bytes),
    /// Closed, with the close code if the server sent one.
    Closed(Option<u16>),
}

/// An open device connection.
pub struct Connection {
    ws: WebSocketStream<TcpStream>,
    next_id: u64,
}

impl Connection {
    /// Opens `gateway`'s `/ws`; `index` picks the local source address.
    pub async fn open(gateway: &Gateway, index: usize) -> Result<Self> {
        let socket = match gateway.addr {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        if gateway.addr.ip().is_loopback() && gateway.addr.is_ipv4() {
            let octet = 2 + (index % SOURCE_ADDRESSES) as u8;
            let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, octet));
            socket.bind(SocketAddr::new(source, 0))?;
        }
        let stream = socket
            .connect(gateway.addr)
            .await
            .with_context(|| format!("connecting to {}", gateway.addr))?;
        stream.set_nodelay(true)?;
        let config = WebSocketConfig::default()
            .read_buffer_size(4096)
            .write_buffer_size(0);
        let (ws, _) = tokio_tungstenite::client_async_with_config(
            gateway.ws_url.as_str(),
            stream,
            Some(config),
        )
        .await
        .with_context(|| format!("WebSocket upgrade at {}", gateway.ws_url))?;
        Ok(Self { ws, next_id: 1 })
    }

    /// Sends a frame's text.
    pub async fn send_text(&mut self, text: String) -> Result<()> {
        self.ws.send(Message::text(text)).await?;
        Ok(())
    }

    /// Sends request `kind` with a fresh id; returns the id.
    pub async fn request(&mut self, kind: &str, payload: Value) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({ "v": 1, "id": id, "type": kind, "payload": payload });
        self.send_text(frame.to_string()).await?;
        Ok(id)
    }

    /// Sends `message.send {text}` to the default chat; returns the id.
    pub async fn send_message(&mut self, text: &str) -> Result<u64> {
        self.request("message.send", json!({ "text": text })).await
    }

    /// The next text frame or the close.
    pub async fn next(&mut self) -> Incoming {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(text))) => return Incoming::Text(text),
                Some(Ok(Message::Close(close))) => {
                    return Incoming::Closed(close.map(|frame| u16::from(frame.code)))
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Incoming::Closed(None),
            }
        }
    }

    /// The next text frame; an error if the connection closes or `timeout` passes.
    pub async fn next_text(&mut self, timeout: Duration) -> Result<Utf8Bytes> {
        match tokio::time::timeout(timeout, self.next()).await {
            Ok(Incoming::Text(text)) => Ok(text),
            Ok(Incoming::Closed(code)) => bail!("connection closed (code {code:?})"),
            Err(_) => bail!("no frame within {timeout:?}"),
        }
    }

    /// `hello` announcing the `sync` that follows; returns the ack's `sync_cursor` (the
    /// account's outbox head).
    pub async fn hello(&mut self, token: &str, device_id: &str) -> Result<u64> {
        let payload = json!({
            "token": token, "device_id": device_id, "device_name": device_id, "resume": true,
        });
        let id = self.request("hello", payload).await?;
        loop {
            let text = self.next_text(HANDSHAKE_TIMEOUT).await?;
            let head = FrameHead::parse(&text).context("unreadable frame")?;
            if head.id != Some(id) {
                continue;
            }
            if head.kind != "hello.ack" {
                bail!("hello answered with {text}");
            }
            let ack: Value = serde_json::from_str(&text)?;
            return ack["payload"]["sync_cursor"]
                .as_u64()
                .with_context(|| format!("hello.ack without sync_cursor: {text}"));
        }
    }

    /// Sends `sync {cursor}` and reads up to its `sync.done`, handing every other frame to
    /// `on_frame`; returns the `sync.done` cursor.
    pub async fn sync(
        &mut self,
        cursor: u64,
        mut on_frame: impl FnMut(&FrameHead<'_>, &str),
    ) -> Result<SyncDone> {
        let id = self.request("sync", json!({ "cursor": cursor })).await?;
        loop {
            let text = self.next_text(HANDSHAKE_TIMEOUT).await?;
            let head = FrameHead::parse(&text).context("unreadable frame")?;
            if head.kind == "sync.done" && head.id == Some(id) {
                let done: Value = serde_json::from_str(&text)?;
                return Ok(SyncDone {
                    cursor: done["payload"]["cursor"].as_u64().unwrap_or(cursor),
                    reset: done["payload"]["reset"].as_bool().unwrap_or(false),
                });
            }
            on_frame(&head, &text);
        }
    }

    /// Pairs like the app: `hello`, then `sync` from the ack's cursor. Returns the cursor.
    pub async fn pair(&mut self, token: &str, device_id: &str) -> Result<u64> {
        let cursor = self.hello(token, device_id).await?;
        let done = self.sync(cursor, |_, _| {}).await?;
        Ok(done.cursor)
    }

    /// Closes from the device side (close frame, then the socket).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.ws.close(None)).await;
    }
}

/// A `sync.done`.
#[derive(Debug, Clone, Copy)]
pub struct SyncDone {
    pub cursor: u64,
    pub reset: bool,
}
