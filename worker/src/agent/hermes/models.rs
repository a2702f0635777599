//! The models Hermes offers, from its OpenAI-style `GET /v1/models`.

use reqwest::StatusCode;
use serde::Deserialize;

use super::endpoint::{describe_failure, Endpoint};
use crate::agent::{AgentError, ModelInfo};

/// Why the models could not be listed; the key problem is told apart because it is fatal
/// at connect, where other failures only leave the default model unknown.
#[derive(Debug)]
pub(super) enum ListFailure {
    /// Hermes refused the key (401).
    KeyRejected(AgentError),
    /// Anything else: unreachable, another status, an unreadable list.
    Other(AgentError),
}

impl From<ListFailure> for AgentError {
    fn from(failure: ListFailure) -> Self {
        match failure {
            ListFailure::KeyRejected(err) | ListFailure::Other(err) => err,
        }
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

/// Lists the models of `endpoint`, in Hermes's order; their ids double as labels, since the
/// OpenAI shape has no display name.
pub(super) async fn list_models(endpoint: &Endpoint) -> Result<Vec<ModelInfo>, ListFailure> {
    let response = endpoint
        .get("/v1/models")
        .send()
        .await
        .map_err(|err| ListFailure::Other(endpoint.unreachable(&err)))?;
    match response.status() {
        status if status.is_success() => {}
        StatusCode::UNAUTHORIZED => {
            let failure = describe_failure(response).await;
            return Err(ListFailure::KeyRejected(endpoint.key_rejected(&failure)));
        }
        _ => {
            let failure = describe_failure(response).await;
            let err = AgentError::Upstream(format!("listing models failed: {failure}"));
            return Err(ListFailure::Other(err));
        }
    }
    let list: ModelList = response.json().await.map_err(|err| {
        ListFailure::Other(AgentError::Upstream(format!(
            "unreadable model list from Hermes: {err}"
        )))
    })?;
    Ok(list
        .data
        .into_iter()
        .map(|model| ModelInfo {
            label: model.id.clone(),
            id: model.id,
        })
        .collect())
}
