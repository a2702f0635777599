//! A recording HTTP server for the push tests: stands in for ntfy, the OAuth token endpoint
//! and the FCM send endpoint. It records every request and answers as the test's responder
//! says. It runs on its own thread and actix system, so tests can use any Tokio runtime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};

use super::PATIENCE;

/// A request the server received.
#[derive(Debug, Clone)]
pub(super) struct Recorded {
    pub(super) method: String,
    pub(super) path: String,
    /// Header values by lower-case name.
    pub(super) headers: HashMap<String, String>,
    pub(super) body: String,
    /// When the request arrived.
    pub(super) at: Instant,
}

impl Recorded {
    /// The value of header `name` (any case), if sent.
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The body as JSON.
    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// Decides the answer (status, JSON or text body) to a request, given how many requests
/// to the same path came before it.
pub(super) type Responder = dyn Fn(&Recorded, usize) -> (u16, String) + Send + Sync;

struct Shared {
    responder: Box<Responder>,
    received: Mutex<Vec<Recorded>>,
}

/// A running recorder; stops when dropped.
pub(super) struct Recorder {
    url: String,
    shared: Arc<Shared>,
    server: ServerHandle,
}

async fn record(request: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let recorded = Recorded {
        method: request.method().to_string(),
        path: request.path().to_owned(),
        headers: request
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    };
    let earlier = {
        let mut received = shared.received.lock().unwrap();
        let earlier = received.iter().filter(|r| r.path == recorded.path).count();
        received.push(recorded.clone());
        earlier
    };
    let (status, body) = (shared.responder)(&recorded, earlier);
    HttpResponse::build(StatusCode::from_u16(status).expect("a valid status"))
        .content_type("application/json")
        .body(body)
}

impl Recorder {
    /// Starts a recorder answering with `responder` on a free loopback port.
    pub(super) fn start(
        responder: impl Fn(&Recorded, usize) -> (u16, String) + Send + Sync + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            responder: Box::new(responder),
            received: Mutex::new(Vec::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let data = web::Data::from(shared.clone());
        let (handle_sender, handle) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(data.clone())
                        .default_service(web::to(record))
                })
                .workers(1)
                .disable_signals()
                .shutdown_timeout(0)
                .listen(listener)
                .expect("listen")
                .run();
                handle_sender
                    .send(server.handle())
                    .expect("hand over the server handle");
                let _ = server.await;
            });
        });
        let server = handle.recv().expect("the recorder started");
        Recorder {
            url,
            shared,
            server,
        }
    }

    /// A recorder answering every request with 200 and `{}`.
    pub(super) fn accepting() -> Self {
        Self::start(|_, _| (200, "{}".to_owned()))
    }

    /// Its base URL, e.g. `http://127.0.0.1:40123`.
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// The requests it received at `path`, in order.
    pub(super) fn at(&self, path: &str) -> Vec<Recorded> {
        self.all().into_iter().filter(|r| r.path == path).collect()
    }

    /// Every request it received, in order.
    pub(super) fn all(&self) -> Vec<Recorded> {
        self.shared.received.lock().unwrap().clone()
    }

    /// The requests at `path` once there are at least `count`, failing the test if they do
    /// not come in time.
    pub(super) async fn wait_for(&self, path: &str, count: usize) -> Vec<Recorded> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let received = self.at(path);
            if received.len() >= count {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} requests at {path}, got {received:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Sending the command is enough; its completion future need not be awaited.
        drop(self.server.stop(false));
    }
}
