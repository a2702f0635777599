//! One Hermes run as an agent turn: submits it (`POST /v1/runs`), follows its one event
//! stream (`GET /v1/runs/{id}/events`; Hermes allows a single consumer per run) and
//! translates the events, ending the turn with exactly one `Done`, `Failed` or `Cancelled`
//! whatever happens upstream.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::approval::approval_id;
use super::endpoint::{describe_error, describe_failure, Endpoint};
use super::run_state::RunState;
use super::sse::frames;
use super::wire::{parse_frame, RunEvent};
use crate::agent::{AgentEvent, TurnInput};

/// Events buffered between the reader and the turn; a slow turn holds the reader back.
const EVENT_BUFFER: usize = 64;
/// Longest wait for the run status that names the answering model once the run completed:
/// the turn's end is not delayed for long by a detail.
const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads one run for one turn.
pub(super) struct RunReader {
    endpoint: Endpoint,
    input: TurnInput,
    /// Model named in `Done` when neither the run status nor the input names one.
    default_model: Option<String>,
    /// Longest silence (not even a keepalive) before the stream counts as dropped.
    idle_limit: Duration,
    state: Arc<RunState>,
    /// Approval requests seen so far, numbering their ids.
    approvals_seen: u32,
}

/// Starts reading `reader`'s run in a task (on the current Tokio runtime) and returns the
/// turn's events. Dropping the events stops the upstream run.
pub(super) fn start(reader: RunReader) -> BoxStream<'static, AgentEvent> {
    let (sender, receiver) = mpsc::channel(EVENT_BUFFER);
    // The run's requests belong to the turn's span (the upstream call in its trace).
    tokio::spawn(tracing::Instrument::in_current_span(reader.drive(sender)));
    stream::unfold(receiver, |mut receiver| async move {
        let event = receiver.recv().await?;
        Some((event, receiver))
    })
    .boxed()
}

/// What to do with one upstream event.
enum Step {
    /// Pass this event on and read on.
    Emit(AgentEvent),
    /// Nothing for the turn; read on.
    Skip,
    /// The run ended with this event.
    End(AgentEvent),
}

impl RunReader {
    /// A reader for one turn; `state` is shared with the turn's controls.
    pub(super) fn new(
        endpoint: Endpoint,
        input: TurnInput,
        default_model: Option<String>,
        idle_limit: Duration,
        state: Arc<RunState>,
    ) -> Self {
        RunReader {
            endpoint,
            input,
            default_model,
            idle_limit,
            state,
            approvals_seen: 0,
        }
    }

    async fn drive(mut self, events: mpsc::Sender<AgentEvent>) {
        let ending = tokio::select! {
            ending = self.play(&events) => ending,
            () = events.closed() => return self.abandon().await,
        };
        // The turn may have gone just now; then there is nobody left to tell.
        let _ = events.send(ending).await;
    }

    /// The run from submission to its ending event.
    async fn play(&mut self, events: &mpsc::Sender<AgentEvent>) -> AgentEvent {
        let run_id = match self.submit().await {
            Ok(run_id) => run_id,
            Err(reason) => {
                self.state.no_run();
                return AgentEvent::Failed(reason);
            }
        };
        self.state.accepted(&run_id);
        let ending = self.follow(&run_id, events).await;
        self.state.set_pending_approval(None);
        ending
    }

    /// `POST /v1/runs`; the run id, or why Hermes did not take the run.
    async fn submit(&self) -> Result<String, String> {
        let response = self
            .endpoint
            .post("/v1/runs", &self.submission())
            // Hermes 0.19 honours the key on its non-streaming routes only; a Hermes that
            // honours it on runs never starts a re-driven turn twice.
            .header("Idempotency-Key", &self.input.turn_key)
            .send()
            .await
            .map_err(|err| {
                format!(
                    "cannot reach Hermes at {}: {}",
                    self.endpoint.shown_url(),
                    describe_error(&err)
                )
            })?;
        let status = response.status();
        if !status.is_success() {
            let failure = describe_failure(response).await;
            let hint = match status {
                reqwest::StatusCode::UNAUTHORIZED => "; check IRIS_AGENT_API_KEY",
                _ => "",
            };
            return Err(format!("Hermes refused the run ({failure}){hint}"));
        }
        let accepted: Value = response
            .json()
            .await
            .map_err(|err| format!("unreadable answer from Hermes to the run: {err}"))?;
        match accepted.get("run_id").and_then(Value::as_str) {
            Some(run_id) if !run_id.is_empty() => Ok(run_id.to_owned()),
            _ => Err(format!(
                "Hermes accepted the run without a run id: {accepted}"
            )),
        }
    }

    /// The body of `POST /v1/runs`. Hermes does not load a session's earlier messages by
    /// `session_id`, so the history travels with every run.
    fn submission(&self) -> Value {
        let history: Vec<Value> = self
            .input
            .history
            .iter()
            .map(|message| json!({"role": message.role, "content": message.content}))
            .collect();
        let mut body = json!({
            "input": text_with_image_note(&self.input),
            "conversation_history": history,
            "session_id": self.input.session_id,
        });
        if let Some(model) = &self.input.model {
            body["model"] = json!(model);
        }
        body
    }

    /// Reads the events of `run_id` until its ending event, passing the others on.
    async fn follow(&mut self, run_id: &str, events: &mpsc::Sender<AgentEvent>) -> AgentEvent {
        let path = format!("/v1/runs/{run_id}/events");
        let subscribed =
            tokio::time::timeout(self.idle_limit, self.endpoint.subscribe(&path).send());
        let response = match subscribed.await {
            Ok(Ok(response)) if response.status().is_success() => response,
            Ok(Ok(response)) => {
                let failure = describe_failure(response).await;
                return AgentEvent::Failed(format!(
                    "cannot follow Hermes run {run_id} ({failure})"
                ));
            }
            Ok(Err(err)) => {
                let err = describe_error(&err);
                return AgentEvent::Failed(format!("cannot follow Hermes run {run_id}: {err}"));
            }
            Err(_elapsed) => {
                return AgentEvent::Failed(format!(
                    "Hermes did not answer the subscription to run {run_id} within {:?}",
                    self.idle_limit
                ));
            }
        };
        let mut frames = pin!(frames(response, self.idle_limit));
        while let Some(frame) = frames.next().await {
            let frame = match frame {
                Ok(frame) => frame,
                Err(err) => {
                    return AgentEvent::Failed(format!(
                        "lost the events of Hermes run {run_id}: {err}"
                    ));
                }
            };
            let event = match parse_frame(&frame.event, &frame.data) {
                Ok(event) => event,
                Err(problem) => {
                    tracing::warn!(run_id, problem, "skipping an unreadable Hermes event");
                    continue;
                }
            };
            match self.step(run_id, event).await {
                Step::Emit(event) => {
                    // A failed send means the turn is gone; `drive` notices and stops the run.
                    let _ = events.send(event).await;
                }
                Step::Skip => {}
                Step::End(ending) => return ending,
            }
        }
        AgentEvent::Failed(format!(
            "Hermes closed the events of run {run_id} before the run ended"
        ))
    }

    async fn step(&mut self, run_id: &str, event: RunEvent) -> Step {
        let emitted = match event {
            RunEvent::TextDelta(delta) if delta.is_empty() => return Step::Skip,
            RunEvent::TextDelta(delta) => AgentEvent::TextDelta(delta),
            RunEvent::ToolStarted { tool, preview } => AgentEvent::ToolStarted {
                name: tool,
                preview,
                args: None,
            },
            RunEvent::ToolProgress { tool, note } => AgentEvent::ToolProgress { name: tool, note },
            RunEvent::ToolCompleted {
                tool,
                duration_secs,
                failed,
            } => AgentEvent::ToolCompleted {
                name: tool,
                duration_secs,
                ok: !failed,
                output_preview: None,
            },
            RunEvent::ApprovalRequested {
                command,
                description,
                choices,
            } => {
                self.approvals_seen += 1;
                let approval_id = approval_id(run_id, self.approvals_seen);
                // Set before the turn hears of it, so an immediate answer finds it pending.
                self.state.set_pending_approval(Some(approval_id.clone()));
                AgentEvent::ApprovalRequested {
                    approval_id,
                    command,
                    description,
                    choices,
                }
            }
            RunEvent::ApprovalResponded { choice } => {
                self.state.set_pending_approval(None);
                AgentEvent::ApprovalResolved { choice }
            }
            RunEvent::Completed { total_tokens } => {
                return Step::End(AgentEvent::Done {
                    model: self.answering_model(run_id).await,
                    tokens: total_tokens,
                });
            }
            RunEvent::Failed { error } => return Step::End(AgentEvent::Failed(error)),
            RunEvent::Cancelled => return Step::End(AgentEvent::Cancelled),
            RunEvent::Ignored(name) => {
                tracing::debug!(run_id, event = name, "ignoring a Hermes run event");
                return Step::Skip;
            }
        };
        Step::Emit(emitted)
    }

    /// The model to name in `Done`: what Hermes says ran the run, else the chat's choice,
    /// else the backend's default.
    async fn answering_model(&self, run_id: &str) -> Option<String> {
        let status = self
            .endpoint
            .get(&format!("/v1/runs/{run_id}"))
            .timeout(STATUS_TIMEOUT)
            .send();
        let reported = match status.await {
            Ok(response) if response.status().is_success() => response
                .json::<Value>()
                .await
                .ok()
                .and_then(|status| status.get("model")?.as_str().map(str::to_owned)),
            _ => None,
        };
        reported
            .or_else(|| self.input.model.clone())
            .or_else(|| self.default_model.clone())
    }

    /// The turn went away before the run ended: nobody else can read this run (one consumer
    /// per run), so stop it rather than let it hold one of Hermes's few run slots. A run
    /// whose submission was still unanswered has no known id and runs to its end.
    async fn abandon(&self) {
        self.state.no_run();
        let Some(run_id) = self.state.run_id_now() else {
            return;
        };
        let stop = self
            .endpoint
            .post(&format!("/v1/runs/{run_id}/stop"), &json!({}))
            .timeout(STATUS_TIMEOUT)
            .send();
        match stop.await {
            Ok(response) => {
                tracing::debug!(run_id, status = %response.status(), "stopped an abandoned Hermes run")
            }
            Err(err) => tracing::debug!(run_id, %err, "could not stop an abandoned Hermes run"),
        }
    }
}

/// The runs API takes text only: attached images are named in the text so the agent knows
/// they exist (devices still see them on the message).
fn text_with_image_note(input: &TurnInput) -> String {
    if input.images.is_empty() {
        return input.text.clone();
    }
    let names: Vec<String> = input
        .images
        .iter()
        .map(|image| image.filename.clone().unwrap_or_else(|| image.mime.clone()))
        .collect();
    format!(
        "{}\n\n[The user attached {} image(s): {}. This connection passes text only.]",
        input.text,
        names.len(),
        names.join(", ")
    )
}
