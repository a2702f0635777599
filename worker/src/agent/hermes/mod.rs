//! The Hermes agent backend: turns run on a Hermes Agent API server (0.19 and later) through
//! its runs API, with tool calls, approvals and stop; steering where the server offers it.
//!
//! # Layout
//! - `endpoint`: base URL, key, HTTP client, Hermes's error bodies.
//! - `connect`: the start-up probes (`/health`, `/v1/capabilities`, `/v1/models`).
//! - `capabilities`: reading the capabilities answer (is there a steer route?).
//! - `models`: `GET /v1/models`.
//! - `run`: one turn's run: submit, follow the events, end with exactly one ending event.
//! - `sse`: the event stream's frames, with the idle limit.
//! - `wire`: the run events' JSON.
//! - `approval`: approval ids and choices.
//! - `run_state`: what the reader tells the controls (run id, pending approval).
//! - `control`: stop, approve, steer.
//! - `tests`: the backend against a fake Hermes replaying recorded streams.

mod approval;
mod capabilities;
mod connect;
mod control;
mod endpoint;
mod models;
mod run;
mod run_state;
mod sse;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};

use self::control::HermesRunControl;
use self::endpoint::Endpoint;
use self::models::list_models;
use self::run::RunReader;
use self::run_state::RunState;
use super::{Agent, AgentCaps, AgentError, AgentRun, ModelInfo, TurnInput, UpstreamConfig};

/// Longest silence on a run's event stream before it counts as dropped: Hermes sends a
/// keepalive comment every 30 s, so three missed keepalives mean the connection is dead.
const IDLE_LIMIT: Duration = Duration::from_secs(90);

/// A Hermes Agent API server as the upstream agent.
///
/// Approval ids are `"<run_id>:<n>"` (the run's nth approval request): Hermes 0.19 has no
/// approval ids and answers whatever approval a run waits on, so only the id of the approval
/// pending right now is accepted by [`crate::agent::RunControl::approve`].
#[derive(Debug)]
pub struct HermesAgent {
    endpoint: Endpoint,
    /// Route template to steer runs at, when the capabilities announce one.
    steer_path: Option<String>,
    default_model: Option<String>,
    idle_limit: Duration,
}

impl HermesAgent {
    /// Connects to the Hermes at `config.url` (with or without a trailing `/v1` or `/`):
    /// checks `/health`, probes `/v1/capabilities` for a steer route and lists the models
    /// (the first is the default unless `config.model` names one).
    ///
    /// Fails with [`AgentError::Upstream`] naming `IRIS_AGENT_URL` if Hermes cannot be reached
    /// or `IRIS_AGENT_API_KEY` if it refuses the key.
    pub async fn connect(config: UpstreamConfig) -> Result<HermesAgent, AgentError> {
        let endpoint = Endpoint::new(&config.url, config.api_key)?;
        let probed = connect::probe(&endpoint).await?;
        let default_model = config
            .model
            .or_else(|| probed.models.first().map(|model| model.id.clone()));
        tracing::info!(
            url = endpoint.shown_url(),
            steer = probed.steer_path.is_some(),
            default_model = default_model.as_deref().unwrap_or("(unknown)"),
            "connected to Hermes"
        );
        Ok(HermesAgent {
            endpoint,
            steer_path: probed.steer_path,
            default_model,
            idle_limit: IDLE_LIMIT,
        })
    }

    /// The same agent with another idle limit, so tests need not wait 90 s.
    #[cfg(test)]
    fn with_idle_limit(self, idle_limit: Duration) -> Self {
        HermesAgent { idle_limit, ..self }
    }
}

impl Agent for HermesAgent {
    /// Submits the run in a task on the current Tokio runtime (so it must be called within
    /// one, as actors are); dropping the returned events stops the upstream run.
    fn start(&self, input: TurnInput) -> AgentRun {
        let state = Arc::new(RunState::new());
        let control = HermesRunControl::new(
            self.endpoint.clone(),
            state.clone(),
            self.steer_path.clone(),
        );
        let reader = RunReader::new(
            self.endpoint.clone(),
            input,
            self.default_model.clone(),
            self.idle_limit,
            state,
        );
        AgentRun {
            events: run::start(reader),
            control: Arc::new(control),
        }
    }

    fn models(&self) -> BoxFuture<'static, Result<Vec<ModelInfo>, AgentError>> {
        let endpoint = self.endpoint.clone();
        async move { Ok(list_models(&endpoint).await?) }.boxed()
    }

    /// Tools and approvals always; reasoning never (0.19 does not stream it on runs, and its
    /// `reasoning.available` repeats the answer); steering where the capabilities say so.
    fn caps(&self) -> AgentCaps {
        AgentCaps {
            tools: true,
            reasoning: false,
            approvals: true,
            steer: self.steer_path.is_some(),
        }
    }

    fn default_model(&self) -> Option<String> {
        self.default_model.clone()
    }
}
