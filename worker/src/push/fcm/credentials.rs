//! The Google service account FCM is reached with (`IRIS_FCM_CREDENTIALS`: the JSON key file
//! downloaded from the Firebase or Cloud console).

use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

/// Google's OAuth token endpoint, for key files that do not name one.
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The fields of a service-account key file that FCM needs.
#[derive(Clone, Deserialize)]
pub struct ServiceAccount {
    /// Firebase project the messages are sent in.
    pub project_id: String,
    /// The account's e-mail: the issuer of its OAuth assertions.
    pub client_email: String,
    /// PEM-encoded RSA private key signing the assertions.
    pub private_key: String,
    /// Where assertions are exchanged for access tokens.
    #[serde(default = "google_token_uri")]
    pub token_uri: String,
}

fn google_token_uri() -> String {
    GOOGLE_TOKEN_URI.to_owned()
}

// By hand, so the private key never reaches a log line.
impl std::fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("project_id", &self.project_id)
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl ServiceAccount {
    /// Reads a key file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a service-account key file", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_endpoint_defaults_to_googles() {
        let account: ServiceAccount = serde_json::from_str(
            r#"{"type": "service_account", "project_id": "p", "client_email": "e",
                "private_key": "k"}"#,
        )
        .unwrap();
        assert_eq!(account.token_uri, GOOGLE_TOKEN_URI);
        assert!(!format!("{account:?}").contains("private_key"));
    }
}
