//! A local HTTP server that records every request and answers as its test says, standing
//! in for push services (ntfy, Google's OAuth token endpoint, FCM). It runs on a thread and
//! Tokio runtime of its own, so it serves whatever runtime the test awaits on, and its
//! arrival times are not delayed by the code under test.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

/// How often the waits look at what arrived.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// One recorded request.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Method and target, e.g. `POST /iris-topic`.
    pub request_line: String,
    /// The method, e.g. `POST`.
    pub method: String,
    /// The path without the query, e.g. `/iris-topic`.
    pub path: String,
    /// Headers as `(name, value)` pairs, names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
    /// When the request arrived.
    pub arrived_at: Instant,
}

impl RecordedRequest {
    /// The value of header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON; panics if it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("not a JSON body ({err}): {}", self.body))
    }
}

/// Decides the answer (status, JSON body) to a request, given how many requests to the
/// same path came before it.
pub type Responder = dyn Fn(&RecordedRequest, usize) -> (u16, String) + Send + Sync;

/// An answer with headers of its own besides the JSON content type.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Extra headers as `(name, value)` pairs.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
}

/// Decides the [`Answer`] to a request, given how many requests to the same path came
/// before it.
type AnswerResponder = dyn Fn(&RecordedRequest, usize) -> Answer + Send + Sync;

struct Shared {
    responder: Box<AnswerResponder>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// A running recorder; stops when dropped.
pub struct HttpRecorder {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpRecorder {
    /// Starts a recorder answering 200 and `{}` to everything on a free port.
    pub async fn start() -> Self {
        Self::accepting()
    }

    /// A recorder answering 200 and `{}` to everything, on a free port.
    pub fn accepting() -> Self {
        Self::answering(|_, _| (200, "{}".to_owned()))
    }

    /// A recorder answering with `responder`, on a free port.
    pub fn answering(
        responder: impl Fn(&RecordedRequest, usize) -> (u16, String) + Send + Sync + 'static,
    ) -> Self {
        Self::answering_with_headers(move |request, earlier| {
            let (status, body) = responder(request, earlier);
            Answer {
                status,
                headers: Vec::new(),
                body,
            }
        })
    }

    /// A recorder answering with `responder`, headers included, on a free port.
    pub fn answering_with_headers(
        responder: impl Fn(&RecordedRequest, usize) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            responder: Box::new(responder),
            requests: Mutex::new(Vec::new()),
        });
        // Bound here so the port is known, and accepting, before this returns.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding the recorder");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking recorder socket");
        let addr = listener.local_addr().expect("recorder address");
        let (stop, stopped) = oneshot::channel::<()>();
        let routes = axum::Router::new()
            .fallback(record)
            .with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name("http-recorder".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the recorder's runtime");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("recorder listener");
                    // Not a graceful shutdown: open keep-alive connections would hold it up;
                    // dropping the runtime closes them.
                    tokio::select! {
                        _ = axum::serve(listener, routes) => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("starting the recorder thread");
        Self {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Base URL of the recorder, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests recorded so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("recorder lock").clone()
    }

    /// Requests recorded so far at `path`, in order of arrival.
    pub fn requests_at(&self, path: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.path == path)
            .collect()
    }

    /// Waits up to `timeout` until at least `count` requests arrived; returns them all.
    pub async fn wait_for(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= count || Instant::now() >= deadline {
                return requests;
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// The requests at `path` once there are at least `count`; panics if they do not come
    /// within `timeout`.
    pub async fn expect_at(
        &self,
        path: &str,
        count: usize,
        timeout: Duration,
    ) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests_at(path);
            if requests.len() >= count {
                return requests;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} requests at {path} within {timeout:?}, got {requests:#?}"
            );
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }
}

impl Drop for HttpRecorder {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Joined so the port is closed once the recorder is gone.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Records the request, then answers as the responder says.
async fn record(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let target = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), ToString::to_string);
    let request = RecordedRequest {
        request_line: format!("{method} {target}"),
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        arrived_at: Instant::now(),
    };
    let earlier_at_path = {
        let mut requests = shared.requests.lock().expect("recorder lock");
        let earlier = requests.iter().filter(|r| r.path == request.path).count();
        requests.push(request.clone());
        earlier
    };
    let answer = (shared.responder)(&request, earlier_at_path);
    let status = StatusCode::from_u16(answer.status).expect("a valid status from the responder");
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        answer.body,
    )
        .into_response();
    for (name, value) in answer.headers {
        let name = header::HeaderName::try_from(name).expect("a valid header name");
        let value = header::HeaderValue::try_from(value).expect("a valid header value");
        response.headers_mut().append(name, value);
    }
    response
}
