//! Where one Hermes API server is and how to talk to it: the normalized base URL, the bearer
//! key, the HTTP client with its timeouts, and reading Hermes's OpenAI-style error bodies.

use std::time::Duration;

use reqwest::{Client, RequestBuilder, Response, StatusCode};

use iris_shared::redact::Secret;

use crate::agent::AgentError;

/// Longest wait for a TCP (and TLS) connection to Hermes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest wait for a whole non-streaming answer (everything but the event stream, which
/// runs as long as the run does and is guarded by an idle limit instead).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Most characters of a non-JSON error body quoted in messages.
const MAX_QUOTED_BODY: usize = 200;

/// One Hermes API server.
#[derive(Clone)]
pub(super) struct Endpoint {
    /// Base URL without a trailing `/` or `/v1`, e.g. `http://127.0.0.1:8642`.
    base: String,
    /// `base` with any credentials in it masked, for messages.
    shown: String,
    api_key: Option<Secret>,
    http: Client,
}

/// Leaves the key out, so logging an agent cannot leak it.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.shown)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint for `url` (with or without a trailing `/v1` or `/`).
    pub(super) fn new(url: &str, api_key: Option<Secret>) -> Result<Self, AgentError> {
        let base = normalize_base_url(url);
        if reqwest::Url::parse(&base).is_err() {
            return Err(AgentError::Upstream(format!(
                "IRIS_AGENT_URL {:?} is not a valid URL (expected e.g. http://127.0.0.1:8642)",
                iris_shared::redact::in_text(url)
            )));
        }
        let http = Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|err| AgentError::Upstream(format!("cannot build the HTTP client: {err}")))?;
        Ok(Endpoint {
            shown: iris_shared::redact::url(&base),
            base,
            api_key,
            http,
        })
    }

    /// The normalized base URL, for messages: any password in it masked.
    pub(super) fn shown_url(&self) -> &str {
        &self.shown
    }

    /// A `GET` of `path` (starting with `/`) with the bearer key and the request timeout.
    pub(super) fn get(&self, path: &str) -> RequestBuilder {
        self.authorized(self.http.get(self.url(path)))
            .timeout(REQUEST_TIMEOUT)
    }

    /// A `POST` of `body` as JSON to `path` with the bearer key and the request timeout.
    pub(super) fn post(&self, path: &str, body: &serde_json::Value) -> RequestBuilder {
        self.authorized(self.http.post(self.url(path)))
            .json(body)
            .timeout(REQUEST_TIMEOUT)
    }

    /// A `GET` of an SSE stream at `path`: no overall timeout, the reader guards idleness.
    pub(super) fn subscribe(&self, path: &str) -> RequestBuilder {
        self.authorized(self.http.get(self.url(path)))
            .header(reqwest::header::ACCEPT, "text/event-stream")
    }

    /// `/health` is the one route Hermes serves without the key.
    pub(super) fn health(&self) -> RequestBuilder {
        self.http.get(self.url("/health")).timeout(REQUEST_TIMEOUT)
    }

    /// The error for a 401 from Hermes, pointing at the setting to fix.
    pub(super) fn key_rejected(&self, detail: &str) -> AgentError {
        let problem = match self.api_key {
            Some(_) => "rejected the API key",
            None => "needs an API key",
        };
        AgentError::Upstream(format!(
            "Hermes at {} {problem} ({detail}); set IRIS_AGENT_API_KEY to its API_SERVER_KEY",
            self.base
        ))
    }

    /// The error for a Hermes that cannot be reached, pointing at the setting to check.
    pub(super) fn unreachable(&self, err: &reqwest::Error) -> AgentError {
        AgentError::Upstream(format!(
            "cannot reach Hermes at {}: {}; check IRIS_AGENT_URL and that its API server runs",
            self.shown,
            describe_error(err)
        ))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
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

/// `url` without surrounding spaces, trailing `/`s and one trailing `/v1`: the routes are
/// all built from the server root (`/health` lives outside `/v1`).
pub(super) fn normalize_base_url(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    let root = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    root.trim_end_matches('/').to_owned()
}

/// A failed answer as `"<status>: <message>"`, the message taken from Hermes's OpenAI-style
/// `{"error": {"message"}}` body when there is one, else from the start of the body.
pub(super) async fn describe_failure(response: Response) -> String {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    format!("{}: {}", describe_status(status), error_message(&body))
}

/// The message of an error body: `error.message`, a bare `error` string, or the body itself.
pub(super) fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|json| {
        let error = json.get("error")?;
        error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    from_json.unwrap_or_else(|| body.trim().chars().take(MAX_QUOTED_BODY).collect())
}

/// A transport error with its causes, which carry the useful part ("connection refused").
pub(super) fn describe_error(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    iris_shared::redact::in_text(&text)
}

fn describe_status(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_accepted_with_or_without_v1_and_slashes() {
        for url in [
            "http://127.0.0.1:8642",
            "http://127.0.0.1:8642/",
            "http://127.0.0.1:8642/v1",
            "http://127.0.0.1:8642/v1/",
            " http://127.0.0.1:8642/v1// ",
        ] {
            assert_eq!(normalize_base_url(url), "http://127.0.0.1:8642", "{url}");
        }
    }

    #[test]
    fn a_path_prefix_other_than_v1_is_kept() {
        assert_eq!(
            normalize_base_url("https://example.test/hermes/v1"),
            "https://example.test/hermes"
        );
    }

    #[test]
    fn error_messages_come_from_openai_style_bodies() {
        let body = r#"{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;
        assert_eq!(error_message(body), "Invalid API key");
    }

    #[test]
    fn plain_error_bodies_are_quoted_as_they_are() {
        assert_eq!(error_message("404: Not Found\n"), "404: Not Found");
    }

    #[test]
    fn an_invalid_url_is_refused_naming_iris_agent_url() {
        let err = Endpoint::new("not a url", None).unwrap_err();
        assert!(err.to_string().contains("IRIS_AGENT_URL"), "{err}");
    }
}
