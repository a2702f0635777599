//! The controls of one Hermes run: stop (`POST /v1/runs/{id}/stop`), answering its pending
//! approval (`POST /v1/runs/{id}/approval`) and steering, where the Hermes has a route for it.

use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use reqwest::{Response, StatusCode};
use serde_json::json;

use super::approval::hermes_choice;
use super::endpoint::{describe_failure, error_message, Endpoint};
use super::run_state::RunState;
use crate::agent::{AgentError, RunControl};

/// Controls of one run, shared with its event reader through [`RunState`].
pub(super) struct HermesRunControl {
    endpoint: Endpoint,
    state: Arc<RunState>,
    /// Route template to steer at (`{run_id}` replaced), `None` if this Hermes cannot steer.
    steer_path: Option<String>,
}

impl HermesRunControl {
    pub(super) fn new(
        endpoint: Endpoint,
        state: Arc<RunState>,
        steer_path: Option<String>,
    ) -> Self {
        HermesRunControl {
            endpoint,
            state,
            steer_path,
        }
    }
}

impl RunControl for HermesRunControl {
    /// Waits for the run id if the run is still being submitted, then asks Hermes to stop.
    /// `Ok` also when there is nothing left to stop (the run was refused, or Hermes answers
    /// 404 because it already ended): the event stream then ends with `Failed` or `Done`,
    /// which tells the turn what happened.
    fn stop(&self) -> BoxFuture<'static, Result<(), AgentError>> {
        let endpoint = self.endpoint.clone();
        let state = self.state.clone();
        async move {
            let Some(run_id) = state.run_id().await else {
                return Ok(());
            };
            let response = send(&endpoint, &format!("/v1/runs/{run_id}/stop"), json!({})).await?;
            match response.status() {
                status if status.is_success() => Ok(()),
                StatusCode::NOT_FOUND => Ok(()),
                _ => Err(unexpected(&endpoint, response).await),
            }
        }
        .boxed()
    }

    /// Answers the approval the run waits on, if that is `approval_id` (Hermes 0.19 answers
    /// whichever approval is pending, so a stale id must not reach it).
    fn approve(
        &self,
        approval_id: &str,
        choice: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        let endpoint = self.endpoint.clone();
        let state = self.state.clone();
        let approval_id = approval_id.to_owned();
        let choice = hermes_choice(choice);
        async move {
            let not_pending =
                || AgentError::NotActive(format!("approval {approval_id} is not pending"));
            if state.pending_approval().as_deref() != Some(approval_id.as_str()) {
                return Err(not_pending());
            }
            // A pending approval came from the run's events, so its id is known.
            let run_id = state.run_id_now().ok_or_else(not_pending)?;
            let path = format!("/v1/runs/{run_id}/approval");
            let response = send(&endpoint, &path, json!({ "choice": choice })).await?;
            match response.status() {
                status if status.is_success() => Ok(()),
                // 400: a choice Hermes does not take; 404/409: the approval or run is over.
                StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::CONFLICT => {
                    Err(not_active(response).await)
                }
                _ => Err(unexpected(&endpoint, response).await),
            }
        }
        .boxed()
    }

    /// Sends `text` to the steer route the capabilities announced (body `{text}`); without
    /// one (Hermes 0.19), `Unsupported` at once.
    fn steer(&self, text: &str) -> BoxFuture<'static, Result<(), AgentError>> {
        let Some(steer_path) = self.steer_path.clone() else {
            let unsupported = AgentError::Unsupported(
                "this Hermes has no steer endpoint; stop the turn and send a new message instead"
                    .to_owned(),
            );
            return futures_util::future::ready(Err(unsupported)).boxed();
        };
        let endpoint = self.endpoint.clone();
        let state = self.state.clone();
        let text = text.to_owned();
        async move {
            let Some(run_id) = state.run_id().await else {
                return Err(AgentError::NotActive("the run did not start".to_owned()));
            };
            let path = steer_path.replace("{run_id}", &run_id);
            let response = send(&endpoint, &path, json!({ "text": text })).await?;
            match response.status() {
                status if status.is_success() => Ok(()),
                StatusCode::NOT_FOUND | StatusCode::CONFLICT => Err(not_active(response).await),
                _ => Err(unexpected(&endpoint, response).await),
            }
        }
        .boxed()
    }
}

async fn send(
    endpoint: &Endpoint,
    path: &str,
    body: serde_json::Value,
) -> Result<Response, AgentError> {
    endpoint
        .post(path, &body)
        .send()
        .await
        .map_err(|err| endpoint.unreachable(&err))
}

/// `NotActive` with Hermes's own message (e.g. "Run has no active approval session").
async fn not_active(response: Response) -> AgentError {
    let body = response.text().await.unwrap_or_default();
    AgentError::NotActive(error_message(&body))
}

async fn unexpected(endpoint: &Endpoint, response: Response) -> AgentError {
    if response.status() == StatusCode::UNAUTHORIZED {
        return endpoint.key_rejected(&describe_failure(response).await);
    }
    AgentError::Upstream(describe_failure(response).await)
}
