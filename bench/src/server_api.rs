//! The gateways' server API (docs/server-api.md) as the bench uses it: device tokens for
//! its accounts, and publishing messages into an account's default chat.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use serde_json::json;

/// A server API client over keep-alive connections.
#[derive(Clone)]
pub struct ServerApi {
    http: reqwest::Client,
    admin_key: Arc<str>,
}

impl ServerApi {
    /// A client sending `Authorization: Bearer <admin_key>`.
    pub fn new(admin_key: &str) -> Result<Self> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            .build()?;
        Ok(Self {
            http,
            admin_key: admin_key.into(),
        })
    }

    /// Creates a device token for `account` through gateway `base`.
    pub async fn create_token(&self, base: &str, account: &str) -> Result<String> {
        let url = format!("{base}/api/v1/accounts/{account}/tokens");
        let response = self
            .http
            .post(&url)
            .bearer_auth(&*self.admin_key)
            .json(&json!({ "name": "iris-bench" }))
            .send()
            .await
            .with_context(|| format!("POST {url}"))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        if !status.is_success() {
            bail!("POST {url}: {status} {body}");
        }
        body["token"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("POST {url}: no token in {body}"))
    }

    /// One token per account, `concurrency` requests at once, spread over `bases`.
    pub async fn create_tokens(
        &self,
        bases: &[String],
        accounts: &[String],
        concurrency: usize,
    ) -> Result<Vec<String>> {
        stream::iter(accounts.iter().enumerate())
            .map(|(index, account)| {
                let base = &bases[index % bases.len()];
                self.create_token(base, account)
            })
            .buffered(concurrency.max(1))
            .try_collect()
            .await
    }

    /// Publishes `text` (role `cron`) into `account`'s default chat through gateway `base`.
    pub async fn publish(&self, base: &str, account: &str, text: &str) -> Result<()> {
        let url = format!("{base}/api/v1/accounts/{account}/messages");
        let response = self
            .http
            .post(&url)
            .bearer_auth(&*self.admin_key)
            .json(&json!({ "text": text }))
            .send()
            .await
            .with_context(|| format!("POST {url}"))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            bail!("POST {url}: {status} {body}");
        }
        Ok(())
    }

    /// The HTTP client, for `/metrics` scrapes.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }
}
