//! A fake Hermes 0.19 API server for the backend's tests: the routes the backend uses, one
//! run whose event stream replays a script of recorded frames, and a record of every request.
//! It runs on its own thread and actix system, so tests can use any Tokio runtime.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpServer};
use serde_json::Value;
use tokio::sync::Notify;

use super::fake_routes::routes;
use crate::agent::UpstreamConfig;

/// The key the fake takes.
pub(super) const API_KEY: &str = "test-key-0123456789abcdef";
/// Id of the fake's one run.
pub(super) const RUN_ID: &str = "run_fake0000";
/// Model the fake lists and names in the run status, as Hermes 0.19 does.
pub(super) const HERMES_MODEL: &str = "hermes-agent";

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
    pub(super) refusal: Option<(u16, &'static str)>,
    /// Announce and serve a steer route.
    pub(super) steer: bool,
    /// Answer `GET /v1/runs/{id}`.
    pub(super) run_status: bool,
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

/// What the fake's routes share: the script and what happened so far.
pub(super) struct Shared {
    pub(super) script: Script,
    /// The steps, until the one allowed subscriber takes them.
    pub(super) unread_steps: Mutex<Option<Vec<Step>>>,
    /// An `approval.request` was sent and not answered yet.
    pub(super) approval_pending: AtomicBool,
    pub(super) approval_answered: Notify,
    pub(super) stop_asked: Notify,
    /// The script ran out: the run is over, as far as stop is concerned.
    pub(super) stream_finished: AtomicBool,
    pub(super) received: Mutex<Vec<Received>>,
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
            api_key: Some(API_KEY.into()),
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
