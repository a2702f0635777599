//! The routes of the fake Hermes: what Hermes 0.19 answers on each, as recorded (bodies,
//! status codes, error messages), driven by the fake's script.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};

use super::fake_hermes::{Received, Shared, Step, API_KEY, HERMES_MODEL, RUN_ID};
use super::fixtures;

/// How long an `Abort` waits before cutting, so the frames before it reach the client.
const FLUSH_GRACE: Duration = Duration::from_millis(50);

/// Registers every route the backend uses.
pub(super) fn routes(config: &mut web::ServiceConfig) {
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
