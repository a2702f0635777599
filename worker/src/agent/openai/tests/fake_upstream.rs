//! Test support: a tiny scripted OpenAI-compatible HTTP server on a loopback port.
//!
//! Every request is recorded and answered by the test's script. Streamed answers use
//! chunked encoding, as real servers do, so hanging up mid-stream looks like a broken
//! answer to the client; and the server notices when the client hangs up on it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path, e.g. `/v1/models`.
    pub path: String,
    /// The `Authorization` header, if sent.
    pub authorization: Option<String>,
    /// The JSON body (`Null` when there is none).
    pub body: Value,
}

/// How the server answers a request.
pub enum Reply {
    /// A JSON body with this status.
    Json(u16, Value),
    /// A `200 text/event-stream` answer written step by step.
    Stream(Vec<Step>),
}

/// One step of a streamed answer.
pub enum Step {
    /// Bytes of the event stream, sent as one chunk.
    Send(String),
    /// A pause; the server notices a client hanging up meanwhile.
    Pause(Duration),
    /// Closes the connection without finishing the answer.
    HangUp,
}

impl Step {
    /// An unnamed event whose data is `json`.
    pub fn data(json: Value) -> Step {
        Step::Send(format!("data: {json}\n\n"))
    }

    /// The `data: [DONE]` that ends OpenAI streams.
    pub fn done() -> Step {
        Step::Send("data: [DONE]\n\n".into())
    }
}

type Script = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The running server; it stops when dropped.
pub struct FakeUpstream {
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    hang_ups: Arc<Notify>,
    server: JoinHandle<()>,
}

impl FakeUpstream {
    /// Starts a server answering each request with `script`.
    pub async fn start(script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hang_ups = Arc::new(Notify::new());
        let script: Arc<Script> = Arc::new(script);
        let server = tokio::spawn({
            let requests = requests.clone();
            let hang_ups = hang_ups.clone();
            async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let connection = Connection {
                        socket,
                        script: script.clone(),
                        requests: requests.clone(),
                        hang_ups: hang_ups.clone(),
                    };
                    tokio::spawn(connection.serve());
                }
            }
        });
        Self {
            url,
            requests,
            hang_ups,
            server,
        }
    }

    /// The requests received so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The one `POST /v1/chat/completions` received.
    pub fn chat_request(&self) -> Recorded {
        let mut posts: Vec<_> = self
            .requests()
            .into_iter()
            .filter(|request| request.path == "/v1/chat/completions")
            .collect();
        assert_eq!(posts.len(), 1, "expected one chat completion request");
        posts.remove(0)
    }

    /// Waits (up to a second) until a client hangs up during a streamed answer.
    pub async fn client_hung_up(&self) -> bool {
        let wait = self.hang_ups.notified();
        tokio::time::timeout(Duration::from_secs(1), wait)
            .await
            .is_ok()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// One accepted connection; it serves a single request, then closes.
struct Connection {
    socket: TcpStream,
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    hang_ups: Arc<Notify>,
}

impl Connection {
    async fn serve(mut self) {
        let Some(request) = read_request(&mut self.socket).await else {
            return;
        };
        self.requests.lock().unwrap().push(request.clone());
        // Errors mean the client went away, which the steps report where it matters.
        let _ = match (self.script)(&request) {
            Reply::Json(status, body) => self.write_json(status, &body).await,
            Reply::Stream(steps) => self.write_stream(steps).await,
        };
    }

    async fn write_json(&mut self, status: u16, body: &Value) -> std::io::Result<()> {
        let body = body.to_string();
        let head = format!(
            "HTTP/1.1 {status} Fake\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        self.socket.write_all((head + &body).as_bytes()).await
    }

    async fn write_stream(&mut self, steps: Vec<Step>) -> std::io::Result<()> {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                    Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
        self.socket.write_all(head.as_bytes()).await?;
        for step in steps {
            match step {
                Step::Send(text) => {
                    let chunk = format!("{:x}\r\n{text}\r\n", text.len());
                    self.socket.write_all(chunk.as_bytes()).await?;
                }
                Step::Pause(pause) => {
                    // The client sends nothing more, so a read only ends when it hangs up.
                    let mut byte = [0u8; 1];
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        _ = self.socket.read(&mut byte) => {
                            self.hang_ups.notify_one();
                            return Ok(());
                        }
                    }
                }
                Step::HangUp => return Ok(()),
            }
        }
        self.socket.write_all(b"0\r\n\r\n").await
    }
}

/// Reads one request: head, then a `Content-Length` body.
async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut received = Vec::new();
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut buffer = [0u8; 4096];
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        received.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
    let mut request_line = head.lines().next()?.split_whitespace();
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let length: usize = header("content-length").map_or(0, |n| n.parse().unwrap());
    let mut body = received[head_end..].to_vec();
    while body.len() < length {
        let mut buffer = [0u8; 4096];
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(Recorded {
        method,
        path,
        authorization: header("authorization"),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
