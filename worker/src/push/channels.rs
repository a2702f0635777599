//! The push services of this worker (ntfy, FCM) and delivering one notification to one
//! device through every service it has a target for, each with retries.
//!
//! A device with both an FCM token and an ntfy topic, on a worker configured with both
//! services, is pushed through both: the app registered both on purpose (say FCM for the
//! system tray and ntfy for a UnifiedPush distributor), and each stands in if the other fails.

use std::time::Duration;

use iris_shared::push::{PushJob, PushTarget};

use super::fcm::Fcm;
use super::ntfy::Ntfy;
use super::retry::{with_retries, Outcome, PUSH_RETRIES};
use super::settings::PushSettings;

/// Longest one request to a push service may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest connecting to a push service may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What delivering to one device did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivered {
    /// Services that took the notification.
    pub sent: u32,
    /// Services given up on.
    pub given_up: u32,
}

/// The configured push services.
pub struct Channels {
    ntfy: Option<Ntfy>,
    fcm: Option<Fcm>,
}

impl Channels {
    /// The services in `settings`, sharing one HTTP client. Fails if the FCM key cannot sign.
    pub fn new(settings: &PushSettings) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("iris-worker/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            ntfy: settings
                .ntfy
                .as_ref()
                .map(|ntfy| Ntfy::new(http.clone(), &ntfy.url, ntfy.token.clone())),
            fcm: settings
                .fcm
                .as_ref()
                .map(|fcm| {
                    Fcm::new(
                        http.clone(),
                        &fcm.account,
                        fcm.token_url.clone(),
                        &fcm.endpoint,
                    )
                })
                .transpose()?,
        })
    }

    /// Whether any configured service can reach `target`.
    pub fn reaches(&self, target: &PushTarget) -> bool {
        (self.ntfy.is_some() && target.ntfy_topic.is_some())
            || (self.fcm.is_some() && target.fcm_token.is_some())
    }

    /// Sends `job` to `device` through every configured service it has a target for, at
    /// once, each retried on its own; returns when all were sent or given up.
    pub async fn deliver(&self, device: &str, job: &PushJob, target: &PushTarget) -> Delivered {
        let ntfy = async {
            match (&self.ntfy, &target.ntfy_topic) {
                (Some(ntfy), Some(topic)) => {
                    Some(with_retries(&PUSH_RETRIES, || ntfy.send(topic, job)).await)
                }
                _ => None,
            }
        };
        let fcm = async {
            match (&self.fcm, &target.fcm_token) {
                (Some(fcm), Some(token)) => {
                    Some(with_retries(&PUSH_RETRIES, || fcm.send(token, job)).await)
                }
                _ => None,
            }
        };
        let (ntfy, fcm) = tokio::join!(ntfy, fcm);
        let mut delivered = Delivered::default();
        for (service, outcome) in [("ntfy", ntfy), ("fcm", fcm)] {
            match outcome {
                Some(Outcome::Sent { attempts }) => {
                    delivered.sent += 1;
                    tracing::info!(
                        account = %job.account, device, service, chat = %job.chat_id,
                        seq = job.seq, kind = job.kind.as_str(), attempts, "push sent"
                    );
                }
                Some(Outcome::GivenUp { attempts, error }) => {
                    delivered.given_up += 1;
                    tracing::warn!(
                        account = %job.account, device, service, chat = %job.chat_id,
                        seq = job.seq, attempts, %error, "push given up"
                    );
                }
                None => {}
            }
        }
        delivered
    }
}
