//! OAuth access tokens for FCM: a JWT assertion signed with the service account's key
//! (RS256, scope `firebase.messaging`) exchanged at the token endpoint, cached until
//! shortly before it expires.
//!
//! One refresh at a time: concurrent sends wait for the refresh in progress instead of
//! each asking for a token of their own.

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::credentials::ServiceAccount;
use crate::push::retry::SendError;

/// The OAuth scope that allows sending FCM messages.
pub const SCOPE: &str = "https://www.googleapis.com/auth/firebase.messaging";
/// The grant type of a signed-assertion exchange (RFC 7523).
const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Lifetime of an assertion; Google accepts at most an hour.
const ASSERTION_LIFETIME_SECS: u64 = 3_600;
/// A token is replaced this long before it expires, so no request carries an expired one.
const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// Claims of the assertion.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The service account.
    pub iss: String,
    /// What the token may do.
    pub scope: String,
    /// The token endpoint the assertion is meant for.
    pub aud: String,
    /// Issued at (s since the epoch).
    pub iat: u64,
    /// Expires at (s since the epoch).
    pub exp: u64,
}

/// The token endpoint's answer.
#[derive(Deserialize)]
struct TokenReply {
    access_token: String,
    expires_in: u64,
}

struct Cached {
    token: String,
    refresh_at: Instant,
}

/// Access tokens of one service account.
pub struct AccessTokens {
    http: reqwest::Client,
    issuer: String,
    audience: String,
    token_url: String,
    key: EncodingKey,
    cached: Mutex<Option<Cached>>,
}

impl AccessTokens {
    /// Tokens for `account`, fetched from `token_url` (default: the account's `token_uri`).
    /// Fails if the account's key cannot sign.
    pub fn new(
        http: reqwest::Client,
        account: &ServiceAccount,
        token_url: Option<String>,
    ) -> anyhow::Result<Self> {
        let key = EncodingKey::from_rsa_pem(account.private_key.as_bytes())
            .map_err(|err| anyhow::anyhow!("the FCM service account's private key: {err}"))?;
        let tokens = Self {
            http,
            issuer: account.client_email.clone(),
            // The audience stays the account's own endpoint even when requests go
            // elsewhere (a proxy): it is what Google checks.
            audience: account.token_uri.clone(),
            token_url: token_url.unwrap_or_else(|| account.token_uri.clone()),
            key,
            cached: Mutex::new(None),
        };
        // Sign once now, so a broken key stops the worker at start rather than every push.
        tokens
            .assertion(iris_shared::clock::now_ms() / 1000)
            .map_err(|err| anyhow::anyhow!("cannot sign with the FCM private key: {err}"))?;
        Ok(tokens)
    }

    /// The signed assertion for `now_secs`.
    fn assertion(&self, now_secs: u64) -> jsonwebtoken::errors::Result<String> {
        let claims = Claims {
            iss: self.issuer.clone(),
            scope: SCOPE.to_owned(),
            aud: self.audience.clone(),
            iat: now_secs,
            exp: now_secs + ASSERTION_LIFETIME_SECS,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.key)
    }

    /// A valid access token: the cached one, or a new one.
    pub async fn get(&self) -> Result<String, SendError> {
        let mut cached = self.cached.lock().await;
        if let Some(current) = cached.as_ref() {
            if Instant::now() < current.refresh_at {
                return Ok(current.token.clone());
            }
        }
        let fresh = self.fetch().await?;
        let token = fresh.token.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    /// Drops `stale` from the cache (FCM refused it), so the next [`Self::get`] fetches a
    /// new token. A token already replaced by another caller is left alone.
    pub async fn forget(&self, stale: &str) {
        let mut cached = self.cached.lock().await;
        if cached
            .as_ref()
            .is_some_and(|current| current.token == stale)
        {
            *cached = None;
        }
    }

    async fn fetch(&self) -> Result<Cached, SendError> {
        let assertion = self
            .assertion(iris_shared::clock::now_ms() / 1000)
            .map_err(|err| SendError::Permanent(format!("cannot sign the assertion: {err}")))?;
        let response = self
            .http
            .post(&self.token_url)
            .form(&[("grant_type", GRANT_TYPE), ("assertion", &assertion)])
            .send()
            .await
            .map_err(|e| SendError::transport(&e))?;
        if !response.status().is_success() {
            return Err(SendError::from_response(response)
                .await
                .context("FCM token endpoint"));
        }
        let body = response.text().await.unwrap_or_default();
        let reply: TokenReply = serde_json::from_str(&body).map_err(|err| {
            SendError::Retryable(format!("FCM token endpoint: unreadable answer: {err}"))
        })?;
        let lifetime = Duration::from_secs(reply.expires_in);
        Ok(Cached {
            token: reply.access_token,
            refresh_at: Instant::now() + lifetime.saturating_sub(REFRESH_MARGIN),
        })
    }
}
