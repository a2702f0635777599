//! Sending one notification through Firebase Cloud Messaging (HTTP v1 API):
//! `POST {IRIS_FCM_ENDPOINT}/v1/projects/{project_id}/messages:send` with an OAuth access
//! token of the service account in `IRIS_FCM_CREDENTIALS`.
//!
//! - `credentials`: the service-account key file.
//! - `access_token`: the signed assertion, its exchange, the token cache.
//! - `message`: the request body.

pub mod access_token;
pub mod credentials;
mod message;

use iris_shared::push::PushJob;
use reqwest::StatusCode;

use self::access_token::AccessTokens;
use self::credentials::ServiceAccount;
use super::retry::SendError;

/// FCM reached with one service account.
pub struct Fcm {
    http: reqwest::Client,
    tokens: AccessTokens,
    send_url: String,
}

impl Fcm {
    /// FCM at `endpoint` for `account`, with tokens from `token_url` (default: the
    /// account's `token_uri`). Fails if the account's key cannot sign.
    pub fn new(
        http: reqwest::Client,
        account: &ServiceAccount,
        token_url: Option<String>,
        endpoint: &str,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            tokens: AccessTokens::new(http.clone(), account, token_url)?,
            send_url: format!(
                "{}/v1/projects/{}/messages:send",
                endpoint.trim_end_matches('/'),
                account.project_id
            ),
            http,
        })
    }

    /// Sends `job` to the device with `registration_token` (one attempt).
    pub async fn send(&self, registration_token: &str, job: &PushJob) -> Result<(), SendError> {
        let access_token = self.tokens.get().await?;
        let response = self
            .http
            .post(&self.send_url)
            .bearer_auth(&access_token)
            .json(&message::message(registration_token, job))
            .send()
            .await
            .map_err(|e| SendError::transport(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let error = SendError::from_response(response).await;
        if status == StatusCode::UNAUTHORIZED {
            // The token was revoked or expired early: the next attempt fetches a new one.
            self.tokens.forget(&access_token).await;
            return Err(SendError::Retryable(format!(
                "FCM refused the access token: {error}"
            )));
        }
        Err(error)
    }
}
