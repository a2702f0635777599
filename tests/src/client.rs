//! A device's WebSocket connection to a gateway. Every frame it receives is checked
//! against the wire contract, and its `seq`s must be strictly increasing over the whole
//! connection; a violation fails the test on the spot, showing the frame. Binary frames
//! (media chunks) are handed over as they are.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::contract::check_server_frame;
use crate::frames::{id_of, payload_u64, seq_of, type_of};

/// The chat every account starts with.
pub const DEFAULT_CHAT: &str = "android:default";
/// How long `recv` waits by default.
pub const DEFAULT_RECV_TIMEOUT: Duration = Duration::from_secs(10);

/// What the server did next.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A (valid) text frame.
    Frame(Value),
    /// A binary frame (a media chunk), as received.
    Binary(Vec<u8>),
    /// The server closed the connection, with this close code if it gave one.
    Closed(Option<u16>),
}

/// One device connection.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    label: String,
    next_id: u64,
    last_seq: Option<u64>,
    recv_timeout: Duration,
    /// Whether a seq that does not increase fails the test at once (otherwise the caller
    /// counts it).
    strict_seq_order: bool,
}

impl Client {
    /// A client over an open WebSocket.
    fn over(ws: WebSocketStream<MaybeTlsStream<TcpStream>>, label: &str) -> Self {
        Self {
            ws,
            label: label.to_owned(),
            next_id: 1,
            last_seq: None,
            recv_timeout: DEFAULT_RECV_TIMEOUT,
            strict_seq_order: true,
        }
    }

    /// Opens `ws://addr/ws`; `label` names the device in failure messages.
    pub async fn connect(addr: SocketAddr, label: &str) -> Self {
        Self::try_connect(addr, label)
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot connect to ws://{addr}/ws: {err}"))
    }

    /// Opens `ws://addr/ws`, or says why it could not.
    pub async fn try_connect(addr: SocketAddr, label: &str) -> Result<Self, String> {
        Self::try_connect_with_headers(addr, label, &[]).await
    }

    /// Opens `ws://addr/ws` with extra HTTP headers on the upgrade request.
    pub async fn connect_with_headers(
        addr: SocketAddr,
        label: &str,
        headers: &[(&'static str, &str)],
    ) -> Self {
        Self::try_connect_with_headers(addr, label, headers)
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot connect to ws://{addr}/ws: {err}"))
    }

    /// [`Client::connect_with_headers`], or why it could not connect.
    pub async fn try_connect_with_headers(
        addr: SocketAddr,
        label: &str,
        headers: &[(&'static str, &str)],
    ) -> Result<Self, String> {
        let url = format!("ws://{addr}/ws");
        let mut request = url
            .as_str()
            .into_client_request()
            .unwrap_or_else(|err| panic!("[{label}] bad url {url}: {err}"));
        for (name, value) in headers {
            let value = HeaderValue::from_str(value).expect("header value");
            request.headers_mut().insert(*name, value);
        }
        let (ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|err| err.to_string())?;
        Ok(Self::over(ws, label))
    }

    /// Opens `ws://addr/ws` over a socket with a receive buffer of only `recv_buffer`
    /// bytes, so a device that stops reading fills up quickly (a slow phone).
    pub async fn connect_with_small_window(
        addr: SocketAddr,
        label: &str,
        recv_buffer: u32,
    ) -> Self {
        Self::try_connect_with_small_window(addr, label, recv_buffer)
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot connect to ws://{addr}/ws: {err}"))
    }

    /// [`Client::connect_with_small_window`], or why it could not connect.
    pub async fn try_connect_with_small_window(
        addr: SocketAddr,
        label: &str,
        recv_buffer: u32,
    ) -> Result<Self, String> {
        let socket = tokio::net::TcpSocket::new_v4().map_err(|err| err.to_string())?;
        socket
            .set_recv_buffer_size(recv_buffer)
            .map_err(|err| err.to_string())?;
        let stream = socket.connect(addr).await.map_err(|err| err.to_string())?;
        let url = format!("ws://{addr}/ws");
        let (ws, _) = tokio_tungstenite::client_async(url.as_str(), MaybeTlsStream::Plain(stream))
            .await
            .map_err(|err| err.to_string())?;
        Ok(Self::over(ws, label))
    }

    /// Lets seqs arrive out of order without failing the test on the spot, for callers
    /// that count every violation themselves (the chaos suite).
    pub fn count_seq_order_myself(&mut self) {
        self.strict_seq_order = false;
    }

    /// Changes how long `recv` and the helpers built on it wait for each frame.
    pub fn set_recv_timeout(&mut self, timeout: Duration) {
        self.recv_timeout = timeout;
    }

    /// The highest seq received on this connection.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// A fresh request id.
    pub fn next_request_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends raw text (possibly not even JSON).
    pub async fn send_text(&mut self, text: &str) {
        let label = &self.label;
        self.ws
            .send(Message::text(text))
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot send {text}: {err}"));
    }

    /// Sends a JSON frame; `false` if the connection is gone (no panic: for callers that
    /// expect connections to break).
    pub async fn try_send(&mut self, frame: &Value) -> bool {
        self.ws.send(Message::text(frame.to_string())).await.is_ok()
    }

    /// Sends `bytes` as a text message without checking that they are UTF-8 (a raw text
    /// frame), as a broken or hostile client would.
    pub async fn send_unchecked_text(&mut self, bytes: Vec<u8>) {
        let label = &self.label;
        let frame = Frame::message(bytes, OpCode::Data(Data::Text), true);
        self.ws
            .send(Message::Frame(frame))
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot send a raw text frame: {err}"));
    }

    /// Sends `bytes` as one binary message split into WebSocket frames of at most `piece`
    /// bytes (a first frame and continuations), as browsers send large messages.
    pub async fn send_fragmented_binary(&mut self, bytes: &[u8], piece: usize) {
        self.send_fragmented(Data::Binary, bytes, piece).await;
    }

    /// Sends `bytes` as one text message split into frames of at most `piece` bytes.
    pub async fn send_fragmented_text(&mut self, bytes: &[u8], piece: usize) {
        self.send_fragmented(Data::Text, bytes, piece).await;
    }

    async fn send_fragmented(&mut self, first: Data, bytes: &[u8], piece: usize) {
        let label = &self.label;
        let pieces: Vec<&[u8]> = bytes.chunks(piece).collect();
        for (index, part) in pieces.iter().enumerate() {
            let opcode = if index == 0 {
                OpCode::Data(first)
            } else {
                OpCode::Data(Data::Continue)
            };
            let frame = Frame::message(part.to_vec(), opcode, index + 1 == pieces.len());
            self.ws
                .send(Message::Frame(frame))
                .await
                .unwrap_or_else(|err| panic!("[{label}] cannot send a fragment: {err}"));
        }
    }

    /// Sends a JSON frame.
    pub async fn send(&mut self, frame: &Value) {
        self.send_text(&frame.to_string()).await;
    }

    /// Sends a binary frame.
    pub async fn send_binary(&mut self, bytes: Vec<u8>) {
        let label = &self.label;
        let len = bytes.len();
        self.ws
            .send(Message::binary(bytes))
            .await
            .unwrap_or_else(|err| panic!("[{label}] cannot send {len} binary bytes: {err}"));
    }

    /// Sends request `type_name` with a fresh id (scoped to `chat_id` if given); returns the id.
    pub async fn request(&mut self, type_name: &str, chat_id: Option<&str>, payload: Value) -> u64 {
        let id = self.next_request_id();
        let mut frame = json!({ "v": 1, "id": id, "type": type_name, "payload": payload });
        if let Some(chat_id) = chat_id {
            frame["chat_id"] = json!(chat_id);
        }
        self.send(&frame).await;
        id
    }

    /// Sends `message.send {text}` to the default chat; returns the request id.
    pub async fn send_message(&mut self, text: &str) -> u64 {
        self.request("message.send", Some(DEFAULT_CHAT), json!({ "text": text }))
            .await
    }

    /// The next frame or close within `timeout`; `None` if nothing came.
    pub async fn next_within(&mut self, timeout: Duration) -> Option<Incoming> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .ok()?;
            match next {
                Some(Ok(Message::Text(text))) => {
                    return Some(Incoming::Frame(self.accept(text.as_str())));
                }
                Some(Ok(Message::Close(close))) => {
                    return Some(Incoming::Closed(close.map(|frame| u16::from(frame.code))));
                }
                Some(Ok(Message::Binary(bytes))) => return Some(Incoming::Binary(bytes.to_vec())),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Some(Incoming::Closed(None)),
            }
        }
    }

    /// Parses, validates and seq-checks one received text frame.
    fn accept(&mut self, text: &str) -> Value {
        let label = &self.label;
        let frame: Value = serde_json::from_str(text)
            .unwrap_or_else(|err| panic!("[{label}] server sent invalid JSON ({err}): {text}"));
        if let Err(errors) = check_server_frame(&frame) {
            panic!("[{label}] frame violates the contract: {errors:#?}\n{frame:#}");
        }
        if let Some(seq) = seq_of(&frame) {
            if let Some(last) = self.last_seq.filter(|_| self.strict_seq_order) {
                assert!(
                    seq > last,
                    "[{label}] seq {seq} arrived after seq {last} (duplicate or out of order): {frame}"
                );
            }
            self.last_seq = Some(seq);
        }
        frame
    }

    /// The next text or binary frame; panics if the server closes or nothing arrives
    /// within the receive timeout.
    pub async fn recv_incoming(&mut self) -> Incoming {
        let timeout = self.recv_timeout;
        match self.next_within(timeout).await {
            Some(Incoming::Closed(code)) => panic!(
                "[{}] the server closed the connection (code {code:?})",
                self.label
            ),
            Some(incoming) => incoming,
            None => panic!("[{}] no frame within {timeout:?}", self.label),
        }
    }

    /// The next text frame within `timeout`; `None` if nothing came. Panics if the server
    /// closes or sends a binary frame.
    pub async fn recv_within(&mut self, timeout: Duration) -> Option<Value> {
        match self.next_within(timeout).await? {
            Incoming::Frame(frame) => Some(frame),
            Incoming::Binary(bytes) => panic!(
                "[{}] unexpected binary frame of {} bytes",
                self.label,
                bytes.len()
            ),
            Incoming::Closed(code) => {
                panic!(
                    "[{}] the server closed the connection (code {code:?})",
                    self.label
                )
            }
        }
    }

    /// The next frame; panics if none arrives within the receive timeout.
    pub async fn recv(&mut self) -> Value {
        let timeout = self.recv_timeout;
        self.recv_within(timeout)
            .await
            .unwrap_or_else(|| panic!("[{}] no frame within {timeout:?}", self.label))
    }

    /// Frames up to and including the first of type `type_name`.
    pub async fn recv_until(&mut self, type_name: &str) -> Vec<Value> {
        self.recv_until_match(type_name, |_| true).await
    }

    /// Frames up to and including the first of type `type_name` that `matches`.
    pub async fn recv_until_match(
        &mut self,
        type_name: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let mut frames = Vec::new();
        loop {
            let timeout = self.recv_timeout;
            let Some(frame) = self.recv_within(timeout).await else {
                panic!(
                    "[{}] no {type_name} within {timeout:?}; received so far: {frames:#?}",
                    self.label
                );
            };
            let done = type_of(&frame) == type_name && matches(&frame);
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }

    /// Frames of an agent turn, up to and including `agent.idle`.
    pub async fn collect_turn(&mut self) -> Vec<Value> {
        self.recv_until("agent.idle").await
    }

    /// Sends `hello` with `token` as `device_id` and returns the `hello.ack` answering it.
    pub async fn hello(&mut self, token: &str, device_id: &str) -> Value {
        let id = self.send_hello(token, device_id).await;
        let ack = self.recv().await;
        assert_eq!(
            type_of(&ack),
            "hello.ack",
            "[{}] hello answered with {ack:#}",
            self.label
        );
        assert_eq!(
            id_of(&ack),
            Some(id),
            "[{}] hello.ack without the hello's id: {ack}",
            self.label
        );
        ack
    }

    /// Sends `hello` with `token` as `device_id` without waiting; returns the request id.
    pub async fn send_hello(&mut self, token: &str, device_id: &str) -> u64 {
        let payload = json!({ "token": token, "device_id": device_id, "device_name": device_id });
        self.request("hello", None, payload).await
    }

    /// Like [`Self::hello`], announcing the `sync` that follows (`resume: true`).
    pub async fn hello_resuming(&mut self, token: &str, device_id: &str) -> Value {
        let payload = json!({
            "token": token, "device_id": device_id, "device_name": device_id, "resume": true,
        });
        let id = self.request("hello", None, payload).await;
        let ack = self.recv().await;
        assert_eq!(
            id_of(&ack),
            Some(id),
            "[{}] hello answered with {ack:#}",
            self.label
        );
        assert_eq!(
            type_of(&ack),
            "hello.ack",
            "[{}] hello answered with {ack:#}",
            self.label
        );
        ack
    }

    /// Sends `sync {cursor}` and returns every frame up to and including its `sync.done`.
    pub async fn sync(&mut self, cursor: u64) -> Vec<Value> {
        let id = self
            .request("sync", None, json!({ "cursor": cursor }))
            .await;
        self.recv_until_match("sync.done", |frame| id_of(frame) == Some(id))
            .await
    }

    /// Pairs like a resuming app does: `hello {resume: true}`, then `sync` from the ack's
    /// cursor. Returns the `hello.ack`.
    pub async fn pair(&mut self, token: &str, device_id: &str) -> Value {
        let ack = self.hello_resuming(token, device_id).await;
        let cursor = payload_u64(&ack, "sync_cursor")
            .unwrap_or_else(|| panic!("[{}] hello.ack without sync_cursor: {ack}", self.label));
        let frames = self.sync(cursor).await;
        assert_eq!(
            frames.len(),
            1,
            "[{}] a fresh device synced from its own cursor got more than sync.done: {frames:#?}",
            self.label
        );
        ack
    }

    /// Waits for the server to close the connection; returns the close code.
    pub async fn expect_close(&mut self) -> Option<u16> {
        let timeout = self.recv_timeout;
        match self.next_within(timeout).await {
            Some(Incoming::Closed(code)) => code,
            Some(Incoming::Frame(frame)) => {
                panic!(
                    "[{}] expected the connection to close, got {frame:#}",
                    self.label
                )
            }
            Some(Incoming::Binary(bytes)) => panic!(
                "[{}] expected the connection to close, got a binary frame of {} bytes",
                self.label,
                bytes.len()
            ),
            None => panic!(
                "[{}] the connection stayed open for {timeout:?}",
                self.label
            ),
        }
    }

    /// Closes the connection from the device side.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Some(Ok(_)) = self.ws.next().await {}
        })
        .await;
    }
}
