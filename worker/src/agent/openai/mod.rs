//! The `openai` agent backend: any OpenAI-compatible `/v1/chat/completions` endpoint
//! (an LLM server, or an agent such as Hermes that speaks the same protocol).
//!
//! Each turn is one streamed chat completion carrying the whole conversation; answer text,
//! reasoning and (from Hermes) tool progress are streamed back as agent events. The
//! endpoint cannot run tools itself, ask for approvals or be steered; a turn can be stopped.

mod base_url;
mod chunk;
mod control;
mod endpoint;
mod hermes_progress;
mod models;
mod request;
mod run;
mod upstream_error;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};

use self::base_url::normalize_base_url;
use self::control::OpenAiControl;
use self::endpoint::{Endpoint, Timeouts};
use self::models::{fetch_models, KnownModels, ModelsError};
use self::request::ChatRequest;
use self::run::run_events;
use super::{Agent, AgentCaps, AgentError, AgentRun, ModelInfo, TurnInput, UpstreamConfig};

/// An agent backed by an OpenAI-compatible endpoint, checked to be reachable.
pub struct OpenAiAgent {
    endpoint: Endpoint,
    /// `IRIS_AGENT_MODEL`, if set.
    configured_model: Option<String>,
    /// Models the upstream listed last.
    known_models: Arc<KnownModels>,
}

impl OpenAiAgent {
    /// Connects to the endpoint at `config.url` (`http://host:port`, with or without
    /// `/v1`) and lists its models once, so a wrong URL or API key fails at start-up with
    /// an error naming the setting to fix. An endpoint without `/v1/models` is accepted
    /// when a model is configured.
    pub async fn connect(config: UpstreamConfig) -> Result<OpenAiAgent, AgentError> {
        Self::connect_with(config, Timeouts::default()).await
    }

    async fn connect_with(
        config: UpstreamConfig,
        timeouts: Timeouts,
    ) -> Result<OpenAiAgent, AgentError> {
        let base = normalize_base_url(&config.url)?;
        let endpoint = Endpoint::new(base, config.api_key, timeouts)?;
        let configured_model = config.model.filter(|model| !model.trim().is_empty());
        let listed = match (fetch_models(&endpoint).await, &configured_model) {
            (Ok(ids), _) => ids,
            (Err(ModelsError::NotFound), Some(model)) => vec![model.clone()],
            (Err(err), _) => return Err(err.into_agent_error(&endpoint)),
        };
        tracing::info!(url = endpoint.shown_url(), models = ?listed, "OpenAI-compatible agent reachable");
        Ok(Self {
            endpoint,
            configured_model,
            known_models: Arc::new(KnownModels::new(listed)),
        })
    }
}

impl Agent for OpenAiAgent {
    fn start(&self, input: TurnInput) -> AgentRun {
        let model = input
            .model
            .clone()
            .filter(|model| !model.is_empty())
            .or_else(|| self.default_model());
        let request = self
            .endpoint
            .chat_completions(&ChatRequest::new(model.as_deref(), &input));
        let (control, stopped) = OpenAiControl::new();
        AgentRun {
            events: run_events(request, model, self.endpoint.idle_timeout(), stopped),
            control: Arc::new(control),
        }
    }

    fn models(&self) -> BoxFuture<'static, Result<Vec<ModelInfo>, AgentError>> {
        let endpoint = self.endpoint.clone();
        let known = self.known_models.clone();
        async move {
            let ids = match fetch_models(&endpoint).await {
                Ok(ids) => {
                    known.set(ids.clone());
                    ids
                }
                Err(err) => {
                    let cached = known.get();
                    if cached.is_empty() {
                        return Err(err.into_agent_error(&endpoint));
                    }
                    tracing::warn!(?err, "listing models failed; offering the last list");
                    cached
                }
            };
            let infos = ids.into_iter().map(|id| ModelInfo {
                label: id.clone(),
                id,
            });
            Ok(infos.collect())
        }
        .boxed()
    }

    fn caps(&self) -> AgentCaps {
        AgentCaps {
            tools: false,
            reasoning: true,
            approvals: false,
            steer: false,
        }
    }

    fn default_model(&self) -> Option<String> {
        self.configured_model
            .clone()
            .or_else(|| self.known_models.get().into_iter().next())
    }
}
