//! The HTTP side of an OpenAI-compatible upstream: one client with the connect and idle
//! timeouts, the routes under the base URL, and the Bearer key on every request.

use std::time::Duration;

use reqwest::{Client, RequestBuilder};
use serde::Serialize;

use iris_shared::redact::Secret;

use crate::agent::AgentError;

/// How long the upstream may take, at most.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// Silence on an open connection (no bytes at all) before a read fails.
    pub idle: Duration,
    /// A whole `GET /v1/models`, which should be quick.
    pub models: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(120),
            models: Duration::from_secs(10),
        }
    }
}

/// An OpenAI-compatible endpoint: where it is and how to talk to it.
#[derive(Clone)]
pub(super) struct Endpoint {
    client: Client,
    base: String,
    /// `base` with any credentials in it masked, for messages.
    shown: String,
    api_key: Option<Secret>,
    timeouts: Timeouts,
}

/// Leaves the key and the URL's credentials out, so logging an agent cannot leak them.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.shown)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint at `base` (already normalized: no trailing `/` or `/v1`).
    pub fn new(
        base: String,
        api_key: Option<Secret>,
        timeouts: Timeouts,
    ) -> Result<Self, AgentError> {
        // A read timeout rather than a total one: answers may stream for many minutes, but
        // an upstream that sends nothing at all for this long has hung.
        let client = Client::builder()
            .connect_timeout(timeouts.connect)
            .read_timeout(timeouts.idle)
            // No idle connections are kept: the agent may be connected on another runtime
            // than the turns run on, and a pooled connection dies with its runtime.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|err| AgentError::Upstream(format!("cannot set up an HTTP client: {err}")))?;
        let api_key = api_key.filter(|key| !key.is_blank());
        Ok(Self {
            client,
            shown: iris_shared::redact::url(&base),
            base,
            api_key,
            timeouts,
        })
    }

    /// The base URL, for messages: any password in it masked.
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// Whether an API key is sent.
    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Silence after which a streamed answer fails.
    pub fn idle_timeout(&self) -> Duration {
        self.timeouts.idle
    }

    /// `GET /v1/models`.
    pub fn list_models(&self) -> RequestBuilder {
        let request = self.client.get(format!("{}/v1/models", self.base));
        self.authorized(request).timeout(self.timeouts.models)
    }

    /// `POST /v1/chat/completions` with `body`, asking for an event stream.
    pub fn chat_completions(&self, body: &impl Serialize) -> RequestBuilder {
        let request = self
            .client
            .post(format!("{}/v1/chat/completions", self.base))
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(body);
        self.authorized(request)
    }

    /// Adds the bearer key and the `traceparent` of the current span, so a traced
    /// upstream joins the turn's trace.
    fn authorized(&self, mut request: RequestBuilder) -> RequestBuilder {
        for (name, value) in iris_shared::telemetry::propagation::current_headers() {
            request = request.header(name, value);
        }
        match &self.api_key {
            Some(key) => request.bearer_auth(key.expose()),
            None => request,
        }
    }
}
