//! A local HTTP server that answers 200 to everything and records each request, standing
//! in for push services (ntfy, FCM) in end-to-end tests.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One recorded request.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Method and path, e.g. `POST /iris-topic`.
    pub request_line: String,
    /// Headers as `name: value` lines (names lower-cased).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl RecordedRequest {
    /// The value of header `name` (lower-case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A running recorder.
pub struct HttpRecorder {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpRecorder {
    /// Starts the recorder on a free port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the recorder");
        let addr = listener.local_addr().expect("recorder address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let recorded = recorded.clone();
                tokio::spawn(async move {
                    if let Some(request) = read_request(&mut stream).await {
                        recorded.lock().expect("recorder lock").push(request);
                    }
                    let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        Self {
            addr,
            requests,
            task,
        }
    }

    /// Base URL of the recorder.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests recorded so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().expect("recorder lock").clone()
    }

    /// Waits up to `timeout` until at least `count` requests arrived; returns them all.
    pub async fn wait_for(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= count || Instant::now() >= deadline {
                return requests;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for HttpRecorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<RecordedRequest> {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        raw.extend_from_slice(&buffer[..read]);
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.rsplit_once(' ')?.0.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = raw[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&buffer[..read]);
    }
    Some(RecordedRequest {
        request_line,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}
