//! Which push services this worker sends through, from its flags (`IRIS_NTFY_*`,
//! `IRIS_FCM_*`, `IRIS_PUSH_MIN_INTERVAL_MS`), and the push kind that implies for
//! `hello.ack.server_caps.push`.

use std::time::Duration;

use iris_shared::protocol::enums::PushKind as ServerPushKind;
use iris_shared::redact::Secret;

use super::fcm::credentials::ServiceAccount;
use crate::config::WorkerArgs;

/// An ntfy server.
#[derive(Debug, Clone)]
pub struct NtfySettings {
    /// Base URL, e.g. `https://ntfy.sh`.
    pub url: String,
    /// Access token, if the server wants one.
    pub token: Option<Secret>,
}

/// FCM through one service account.
#[derive(Debug, Clone)]
pub struct FcmSettings {
    /// The service account.
    pub account: ServiceAccount,
    /// Token endpoint overriding the account's `token_uri`.
    pub token_url: Option<String>,
    /// Base URL of the FCM API.
    pub endpoint: String,
}

/// The configured push services; at least one is set.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// ntfy, if configured.
    pub ntfy: Option<NtfySettings>,
    /// FCM, if configured.
    pub fcm: Option<FcmSettings>,
    /// Least time between two pushes to one device.
    pub min_interval: Duration,
}

/// A flag's value, with an empty one counting as unset (as an empty environment variable).
fn set(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.trim().is_empty())
}

impl PushSettings {
    /// The push settings in `args`, or `None` if no push service is configured. Fails if the
    /// FCM key file cannot be read.
    pub fn from_args(args: &WorkerArgs) -> anyhow::Result<Option<Self>> {
        let ntfy = set(&args.ntfy_url).map(|url| NtfySettings {
            url,
            token: args.ntfy_token.clone().filter(|token| !token.is_blank()),
        });
        let fcm = match args.fcm_credentials.as_deref() {
            Some(path) if !path.as_os_str().is_empty() => Some(FcmSettings {
                account: ServiceAccount::load(path)?,
                token_url: set(&args.fcm_token_url),
                endpoint: args.fcm_endpoint.clone(),
            }),
            _ => None,
        };
        if ntfy.is_none() && fcm.is_none() {
            return Ok(None);
        }
        Ok(Some(Self {
            ntfy,
            fcm,
            min_interval: Duration::from_millis(args.push_min_interval_ms),
        }))
    }
}

/// What `hello.ack.server_caps.push` says: `fcm` if FCM is configured, else `ntfy` if ntfy
/// is, else `none`.
pub fn announced_kind(settings: Option<&PushSettings>) -> ServerPushKind {
    match settings {
        Some(settings) if settings.fcm.is_some() => ServerPushKind::Fcm,
        Some(settings) if settings.ntfy.is_some() => ServerPushKind::Ntfy,
        _ => ServerPushKind::None,
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        worker: WorkerArgs,
    }

    fn settings(args: &[&str]) -> anyhow::Result<Option<PushSettings>> {
        let cli = Cli::try_parse_from(std::iter::once("iris-worker").chain(args.iter().copied()))
            .expect("flags parse");
        PushSettings::from_args(&cli.worker)
    }

    /// A service-account key file in the temp dir, removed when dropped.
    struct KeyFile(std::path::PathBuf);

    impl KeyFile {
        fn new() -> Self {
            let path = std::env::temp_dir()
                .join(format!("iris-push-settings-{}.json", std::process::id()));
            std::fs::write(
                &path,
                r#"{"project_id": "p", "client_email": "e", "private_key": "k"}"#,
            )
            .unwrap();
            Self(path)
        }
    }

    impl Drop for KeyFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn nothing_configured_means_no_push() {
        let none = settings(&[]).unwrap();
        assert!(none.is_none());
        assert_eq!(announced_kind(none.as_ref()), ServerPushKind::None);
        assert!(settings(&["--ntfy-url", ""]).unwrap().is_none());
    }

    #[test]
    fn ntfy_alone_is_announced_as_ntfy() {
        let ntfy = settings(&[
            "--ntfy-url",
            "https://ntfy.sh",
            "--push-min-interval-ms",
            "250",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(ntfy.min_interval, Duration::from_millis(250));
        assert_eq!(announced_kind(Some(&ntfy)), ServerPushKind::Ntfy);
    }

    #[test]
    fn fcm_wins_the_announcement() {
        let file = KeyFile::new();
        let path = file.0.to_str().unwrap();
        let both = settings(&["--ntfy-url", "https://ntfy.sh", "--fcm-credentials", path])
            .unwrap()
            .unwrap();
        assert_eq!(announced_kind(Some(&both)), ServerPushKind::Fcm);
        let fcm = both.fcm.unwrap();
        assert_eq!(fcm.account.project_id, "p");
        assert_eq!(fcm.endpoint, "https://fcm.googleapis.com");
    }

    #[test]
    fn an_unreadable_key_file_is_an_error() {
        assert!(settings(&["--fcm-credentials", "/nonexistent/key.json"]).is_err());
    }
}
