//! Session-level app payloads: `hello`, `sync`, `fcm.register`, `ping`.

use serde::{Deserialize, Serialize};

/// Payload of `hello`: the first frame, carrying authentication and device capabilities.
/// Its `Debug` leaves the token out, so no log line can carry one.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Pairing token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Stable id of the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// Human-readable device name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// What the app can do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<HelloCaps>,
    /// Firebase token for push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fcm_token: Option<String>,
    /// ntfy topic for push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy_topic: Option<String>,
    /// Iris extension: `true` when a `sync` follows (the app resumes from a cursor), so
    /// outboxed frames wait for its replay; absent or `false`, frames flow live at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<bool>,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("device_id", &self.device_id)
            .field("device_name", &self.device_name)
            .field("caps", &self.caps)
            .field("fcm_token", &self.fcm_token)
            .field("ntfy_topic", &self.ntfy_topic)
            .field("resume", &self.resume)
            .finish()
    }
}

/// Capabilities the app announces in `hello`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HelloCaps {
    /// Lowest protocol version the app accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_protocol: Option<u64>,
    /// The app handles media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<bool>,
    /// Push channel the app prefers (free text in the contract, e.g. `fcm`, `ntfy`, `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<String>,
}

/// Payload of `sync`: replay outbox frames after `cursor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncRequest {
    /// The last outbox position the device has seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
}

/// Payload of `fcm.register`: register or change the push target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FcmRegister {
    /// Firebase token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fcm_token: Option<String>,
    /// ntfy topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy_topic: Option<String>,
}

/// Payload of `ping`: keep-alive, answered with `pong`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ping {
    /// Any timestamp; echoed back in `pong`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hellos_debug_form_shows_no_token() {
        let hello = Hello {
            token: Some("iris_0123456789abcdef".to_owned()),
            device_id: Some("phone-1".to_owned()),
            ..Hello::default()
        };
        let shown = format!("{hello:?}");
        assert!(!shown.contains("iris_0123456789abcdef"), "{shown}");
        assert!(
            shown.contains("<redacted>") && shown.contains("phone-1"),
            "{shown}"
        );
    }
}
