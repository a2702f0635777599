//! Media app payloads: uploading (`media.upload.start`/`end`) and pulling (`media.pull`).

use serde::{Deserialize, Serialize};

use crate::protocol::enums::MediaKind;

/// Payload of `media.upload.start`: binary frames of an upload follow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaUploadStart {
    /// App-chosen reference, later listed in `message.send.media_refs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_ref: Option<String>,
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

/// Payload of `media.upload.end`: all binary frames of an upload were sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaUploadEnd {
    /// The upload's reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_ref: Option<String>,
    /// Hex SHA-256 of the bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// Payload of `media.pull`: ask for the bytes of a media item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaPull {
    /// Id from a `media.offer` or message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_id: Option<String>,
}
