//! The upstream's model list: fetching `GET /v1/models`, explaining why it failed, and the
//! last list seen (the fallback when a fresh fetch fails, and the source of the default).

use std::sync::{Mutex, PoisonError};

use reqwest::StatusCode;
use serde::Deserialize;

use super::endpoint::Endpoint;
use super::upstream_error::{http_failure, with_causes};
use crate::agent::AgentError;

/// Why `GET /v1/models` gave no list.
#[derive(Debug)]
pub(super) enum ModelsError {
    /// No HTTP answer at all (refused, DNS, timeout, ...).
    Unreachable(String),
    /// 401 or 403: the API key is missing or wrong.
    Unauthorized(String),
    /// 404: the upstream has no model list (some single-model servers).
    NotFound,
    /// Any other failure.
    Failed(String),
}

impl ModelsError {
    /// The error for the worker's operator, naming the setting to fix.
    pub fn into_agent_error(self, endpoint: &Endpoint) -> AgentError {
        let base = endpoint.shown_url();
        AgentError::Upstream(match self {
            Self::Unreachable(why) => format!(
                "cannot reach the OpenAI-compatible agent at {base} ({why}); check IRIS_AGENT_URL"
            ),
            Self::Unauthorized(why) if endpoint.has_api_key() => format!(
                "the OpenAI-compatible agent at {base} rejected the API key ({why}); \
                 check IRIS_AGENT_API_KEY"
            ),
            Self::Unauthorized(why) => format!(
                "the OpenAI-compatible agent at {base} needs an API key ({why}); \
                 set IRIS_AGENT_API_KEY"
            ),
            Self::NotFound => format!(
                "the OpenAI-compatible agent at {base} has no /v1/models; \
                 check IRIS_AGENT_URL, or set IRIS_AGENT_MODEL"
            ),
            Self::Failed(why) => {
                format!("the OpenAI-compatible agent at {base} failed to list its models ({why})")
            }
        })
    }
}

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ListedModel>,
}

#[derive(Deserialize)]
struct ListedModel {
    id: String,
}

/// Fetches the ids of the models the upstream offers, in its order.
pub(super) async fn fetch_models(endpoint: &Endpoint) -> Result<Vec<String>, ModelsError> {
    let response = endpoint
        .list_models()
        .send()
        .await
        .map_err(|err| ModelsError::Unreachable(with_causes(&err)))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|err| ModelsError::Failed(with_causes(&err)))?;
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            Err(ModelsError::Unauthorized(http_failure(status, &body)))
        }
        StatusCode::NOT_FOUND => Err(ModelsError::NotFound),
        _ if !status.is_success() => Err(ModelsError::Failed(http_failure(status, &body))),
        _ => serde_json::from_str::<ModelList>(&body)
            .map(|list| list.data.into_iter().map(|model| model.id).collect())
            .map_err(|err| ModelsError::Failed(format!("not a model list: {err}"))),
    }
}

/// The model ids last listed by the upstream.
#[derive(Debug)]
pub(super) struct KnownModels(Mutex<Vec<String>>);

impl KnownModels {
    /// Starts with `ids`.
    pub fn new(ids: Vec<String>) -> Self {
        Self(Mutex::new(ids))
    }

    /// The ids, in the upstream's order.
    pub fn get(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the ids with a fresher list.
    pub fn set(&self, ids: Vec<String>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = ids;
    }
}
