//! The checks made once when the worker starts with a Hermes upstream: that it answers, that
//! it takes the key, and what it can do (steering, models).

use reqwest::StatusCode;

use super::capabilities::steer_path;
use super::endpoint::{describe_failure, Endpoint};
use super::models::{list_models, ListFailure};
use crate::agent::{AgentError, ModelInfo};

/// What the probes learnt about a reachable Hermes that takes the key.
#[derive(Debug)]
pub(super) struct Probed {
    /// Route template to steer runs at (`None`: no steering, as in 0.19).
    pub(super) steer_path: Option<String>,
    /// Models it lists (empty if the listing failed for another reason than the key).
    pub(super) models: Vec<ModelInfo>,
}

/// Checks `GET /health`, then `GET /v1/capabilities` and `GET /v1/models` with the key.
/// Fails only if Hermes cannot be reached or refuses the key: a missing capabilities route or
/// model list just means fewer features.
pub(super) async fn probe(endpoint: &Endpoint) -> Result<Probed, AgentError> {
    check_health(endpoint).await?;
    let steer_path = match fetch_capabilities(endpoint).await? {
        Some(capabilities) => steer_path(&capabilities),
        None => None,
    };
    let models = match list_models(endpoint).await {
        Ok(models) => models,
        Err(ListFailure::KeyRejected(err)) => return Err(err),
        Err(ListFailure::Other(err)) => {
            tracing::warn!(%err, "Hermes lists no models; the default model stays unknown");
            Vec::new()
        }
    };
    Ok(Probed { steer_path, models })
}

async fn check_health(endpoint: &Endpoint) -> Result<(), AgentError> {
    let response = endpoint
        .health()
        .send()
        .await
        .map_err(|err| endpoint.unreachable(&err))?;
    if response.status().is_success() {
        return Ok(());
    }
    let failure = describe_failure(response).await;
    Err(AgentError::Upstream(format!(
        "Hermes at {} is not healthy (GET /health: {failure}); check IRIS_AGENT_URL",
        endpoint.shown_url()
    )))
}

/// The capabilities document, or `None` if this Hermes has none (older than the route).
async fn fetch_capabilities(endpoint: &Endpoint) -> Result<Option<serde_json::Value>, AgentError> {
    let response = endpoint
        .get("/v1/capabilities")
        .send()
        .await
        .map_err(|err| endpoint.unreachable(&err))?;
    match response.status() {
        StatusCode::UNAUTHORIZED => Err(endpoint.key_rejected(&describe_failure(response).await)),
        status if status.is_success() => match response.json().await {
            Ok(capabilities) => Ok(Some(capabilities)),
            Err(err) => {
                tracing::warn!(%err, "unreadable Hermes capabilities; assuming none");
                Ok(None)
            }
        },
        status => {
            tracing::warn!(%status, "Hermes has no capabilities route; assuming none");
            Ok(None)
        }
    }
}
