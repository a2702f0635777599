//! Media server payloads: the media reference (`media.offer`) and `media.pull.end`.

use serde::{Deserialize, Serialize};

use crate::protocol::enums::MediaKind;

/// A media item (`definitions.media_ref`); also the whole payload of `media.offer`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaRef {
    /// Id to pass to `media.pull`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_id: Option<String>,
    /// What sort of media it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<MediaKind>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Original file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// Payload of `media.pull.end`: all bytes of a pulled item were sent (or the pull failed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaPullEnd {
    /// True when every byte was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
}
