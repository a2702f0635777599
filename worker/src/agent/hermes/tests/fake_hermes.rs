//! A fake Hermes 0.19 API server for the backend's tests: the routes the backend uses, one
//! run whose event stream replays a script of recorded frames, and a record of every request.
//! It runs on its own thread and actix system, so tests can use any Tokio runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};
use tokio::sync::Notify;

use super::fixtures;
use crate::agent::UpstreamConfig;

/// The key the fake takes.
pub(super) const API_KEY: &str = "test-key-0123456789abcdef";
/// Id of the fake's one run.
pub(super) const RUN_ID: &str = "run_fake0000";
/// Model the fake lists and names in the run status, as Hermes 0.19 does.
pub(super) const HERMES_MODEL: &str = "hermes-agent";

/// How long an `Abort` waits before cutting, so the frames before it reach the client.
const FLUSH_GRACE: Duration = Duration::from_millis(50);

/// One step of the scripted event stream.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// Send these bytes (recorded frames, comments). Sending an `approval.request` makes the
    /// run wait for approval, as in Hermes.
    Send(&'static str),
    /// Send nothing until the approval is answered.
    AwaitApproval,
    /// Send nothing until the run is asked to stop.
    AwaitStop,
    /// Send nothing for this long.
    Pause(Duration),
    /// Cut the connection without ending the body.
    Abort,
}

/// How the fake answers, and what its run streams.
#[derive(Debug, Clone)]
pub(super) struct Script {
    steps: Vec<Step>,
    /// `None`: accept `POST /v1/runs`; else refuse it with this status and body.
    refusal: Option<(u16, &'static str)>,
    steer: bool,
    run_status: bool,
}

impl Script {
    /// A Hermes 0.19 whose run streams `steps`.
    pub(super) fn streaming(steps: Vec<Step>) -> Self {
        Script {
            steps,
            refusal: None,
            steer: false,
            run_status: true,
        }
    }

    /// A Hermes 0.19 that refuses runs with `status` and `body`.
    pub(super) fn refusing(status: u16, body: &'static str) -> Self {
        Script {
            refusal: Some((status, body)),
            ..Script::streaming(Vec::new())
        }
    }

    /// Announces and serves a steer route, as newer Hermes versions do.
    pub(super) fn with_steer(self) -> Self {
        Script {
            steer: true,
            ..self
        }
    }

    /// Answers `GET /v1/runs/{id}` with 404, so the run's model is unknown upstream.
    pub(super) fn without_run_status(self) -> Self {
        Script {
            run_status: false,
            ..self
        }
    }
}

/// A request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Received {
    pub(super) method: String,
    pub(super) path: String,
    /// The JSON body, if there was one.
    pub(super) body: Option<Value>,
}

struct Shared {
    script: Script,
    /// The steps, until the one allowed subscriber takes them.
    unread_steps: Mutex<Option<Vec<Step>>>,
    approval_pending: AtomicBool,
    approval_answered: Notify,
    stop_asked: Notify,
    stream_finished: AtomicBool,
    received: Mutex<Vec<Received>>,
}

/// A running fake Hermes; stops when dropped.
pub(super) struct FakeHermes {
    url: String,
    shared: Arc<Shared>,
    server: ServerHandle,
}

impl FakeHermes {
    /// Starts a fake following `script` on a free loopback port.
    pub(super) fn start(script: Script) -> Self {
        let shared = Arc::new(Shared {
            unread_steps: Mutex::new(Some(script.steps.clone())),
            script,
            approval_pending: AtomicBool::new(false),
            approval_answered: Notify::new(),
            stop_asked: Notify::new(),
            stream_finished: AtomicBool::new(false),
            received: Mutex::new(Vec::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let data = web::Data::from(shared.clone());
        let (handle_sender, handle) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let server =
                    HttpServer::new(move || App::new().app_data(data.clone()).configure(routes))
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
        let server = handle.recv().expect("the fake Hermes started");
        FakeHermes {
            url,
            shared,
            server,
        }
    }

    /// Its base URL, e.g. `http://127.0.0.1:40123`.
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// Settings reaching it with the right key.
    pub(super) fn config(&self) -> UpstreamConfig {
        UpstreamConfig {
            url: self.url.clone(),
            api_key: Some(API_KEY.to_owned()),
            model: None,
        }
    }

    /// JSON bodies of the `POST`s it received at `path`, in order.
    pub(super) fn posted(&self, path: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == path)
            .map(|r| r.body.unwrap_or(Value::Null))
            .collect()
    }

    /// Every request it received, in order.
    pub(super) fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }
}

impl Drop for FakeHermes {
    fn drop(&mut self) {
        // Sending the command is enough; its completion future need not be awaited.
        drop(self.server.stop(false));
    }
}

fn routes(config: &mut web::ServiceConfig) {
    config
        .route("/health", web::get().to(health))
        .route("/v1/capabilities", web::get().to(capabilities))
        .route("/v1/models", web::get().to(models))
        .route("/v1/runs", web::post().to(submit))
        .route("/v1/runs/{run_id}", web::get().to(run_status))
        .route("/v1/runs/{run_id}/events", web::get().to(events))
        .route("/v1/runs/{run_id}/approval", web::post().to(approval))
        .route("/v1/runs/{run_id}/stop", web::post().to(stop))
        .route("/v1/runs/{run_id}/steer", web::post().to(steer));
}

type State = web::Data<Shared>;

async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok", "platform": "hermes-agent"}))
}

async fn capabilities(state: State, request: HttpRequest) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, None) {
        return refusal;
    }
    let mut capabilities: Value = serde_json::from_str(fixtures::CAPABILITIES_0_19).unwrap();
    if state.script.steer {
        capabilities["features"]["run_steer"] = json!(true);
        capabilities["endpoints"]["run_steer"] =
            json!({"method": "POST", "path": "/v1/runs/{run_id}/steer"});
    }
    HttpResponse::Ok().json(capabilities)
}

async fn models(state: State, request: HttpRequest) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, None) {
        return refusal;
    }
    HttpResponse::Ok().json(json!({
        "object": "list",
        "data": [{"id": HERMES_MODEL, "object": "model", "created": 0, "owned_by": "hermes"}],
    }))
}

async fn submit(state: State, request: HttpRequest, body: Bytes) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, Some(&body)) {
        return refusal;
    }
    match state.script.refusal {
        Some((status, body)) => HttpResponse::build(StatusCode::from_u16(status).unwrap())
            .content_type("application/json; charset=utf-8")
            .body(body),
        None => HttpResponse::Accepted().json(json!({"run_id": RUN_ID, "status": "started"})),
    }
}

async fn run_status(state: State, request: HttpRequest) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, None) {
        return refusal;
    }
    if !state.script.run_status || request.match_info()["run_id"] != *RUN_ID {
        return run_not_found(&request);
    }
    HttpResponse::Ok().json(json!({
        "object": "hermes.run", "run_id": RUN_ID, "status": "completed",
        "session_id": RUN_ID, "model": HERMES_MODEL, "last_event": "run.completed",
    }))
}

async fn events(state: State, request: HttpRequest) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, None) {
        return refusal;
    }
    // One consumer per run: the first subscriber takes the steps, later ones get 404.
    let steps = if request.match_info()["run_id"] == *RUN_ID {
        state.unread_steps.lock().unwrap().take()
    } else {
        None
    };
    match steps {
        Some(steps) => HttpResponse::Ok()
            .content_type("text/event-stream")
            .streaming(replay(steps, state.into_inner())),
        None => run_not_found(&request),
    }
}

async fn approval(state: State, request: HttpRequest, body: Bytes) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, Some(&body)) {
        return refusal;
    }
    let choice = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|body| body.get("choice")?.as_str().map(str::to_owned))
        .unwrap_or_default();
    if !["once", "session", "always", "deny"].contains(&choice.as_str()) {
        return openai_error(
            StatusCode::BAD_REQUEST,
            "Invalid approval choice; expected one of: once, session, always, deny",
            "invalid_approval_choice",
        );
    }
    if !state.approval_pending.swap(false, Ordering::SeqCst) {
        let message = format!("Run has no active approval session: {RUN_ID}");
        return openai_error(StatusCode::CONFLICT, &message, "approval_not_active");
    }
    state.approval_answered.notify_one();
    HttpResponse::Ok().json(json!({
        "object": "hermes.run.approval_response", "run_id": RUN_ID, "choice": choice, "resolved": 1,
    }))
}

async fn stop(state: State, request: HttpRequest, body: Bytes) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, Some(&body)) {
        return refusal;
    }
    if state.stream_finished.load(Ordering::SeqCst) {
        return run_not_found(&request);
    }
    state.stop_asked.notify_one();
    HttpResponse::Ok().json(json!({"run_id": RUN_ID, "status": "stopping"}))
}

async fn steer(state: State, request: HttpRequest, body: Bytes) -> HttpResponse {
    if let Some(refusal) = state.refuse_without_key(&request, Some(&body)) {
        return refusal;
    }
    if state.script.steer {
        HttpResponse::Ok().json(json!({"run_id": RUN_ID, "status": "steered"}))
    } else {
        // What Hermes 0.19 answers: aiohttp's plain 404.
        HttpResponse::NotFound().body("404: Not Found")
    }
}

impl Shared {
    /// Records the request, then refuses it (as Hermes does) if it lacks the key.
    fn refuse_without_key(
        &self,
        request: &HttpRequest,
        body: Option<&Bytes>,
    ) -> Option<HttpResponse> {
        self.received.lock().unwrap().push(Received {
            method: request.method().to_string(),
            path: request.path().to_owned(),
            body: body.and_then(|body| serde_json::from_slice(body).ok()),
        });
        let expected = format!("Bearer {API_KEY}");
        let given = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        (given != Some(expected.as_str())).then(|| {
            openai_error(
                StatusCode::UNAUTHORIZED,
                "Invalid API key",
                "invalid_api_key",
            )
        })
    }
}

/// The run's event stream: the script's bytes, paced by its waits.
fn replay(
    steps: Vec<Step>,
    shared: Arc<Shared>,
) -> impl Stream<Item = Result<Bytes, actix_web::Error>> {
    stream::unfold(
        (steps.into_iter(), shared),
        |(mut steps, shared)| async move {
            loop {
                let Some(step) = steps.next() else {
                    shared.stream_finished.store(true, Ordering::SeqCst);
                    return None;
                };
                match step {
                    Step::Send(frames) => {
                        if frames.contains("\"approval.request\"") {
                            shared.approval_pending.store(true, Ordering::SeqCst);
                        }
                        return Some((Ok(Bytes::from_static(frames.as_bytes())), (steps, shared)));
                    }
                    Step::AwaitApproval => shared.approval_answered.notified().await,
                    Step::AwaitStop => shared.stop_asked.notified().await,
                    Step::Pause(pause) => tokio::time::sleep(pause).await,
                    Step::Abort => {
                        // Let actix flush what was sent first; it writes lazily.
                        tokio::time::sleep(FLUSH_GRACE).await;
                        let cut = actix_web::error::ErrorInternalServerError(
                            "connection cut by the script",
                        );
                        return Some((Err(cut), (Vec::new().into_iter(), shared)));
                    }
                }
            }
        },
    )
}

fn run_not_found(request: &HttpRequest) -> HttpResponse {
    let run_id = request.match_info().get("run_id").unwrap_or_default();
    let message = format!("Run not found: {run_id}");
    openai_error(StatusCode::NOT_FOUND, &message, "run_not_found")
}

fn openai_error(status: StatusCode, message: &str, code: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({
        "error": {"message": message, "type": "invalid_request_error", "param": null, "code": code},
    }))
}
