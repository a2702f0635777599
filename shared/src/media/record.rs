//! What Redis knows about stored media: one hash per item (`iris:{a:A}:media:<media_id>`)
//! and, for a day after an upload, the uploader's `media_ref` → `media_id`
//! (`iris:{a:A}:media_ref:<ref>`) so a `message.send` can name the media it attaches.
//! Both carry the account's hash tag: an account can only ever find its own media.

use std::collections::HashMap;

use redis::aio::ConnectionLike;

use crate::keys::AccountKeys;
use crate::protocol::{MediaKind, MediaRef};

/// `media_id` prefix.
const MEDIA_ID_PREFIX: &str = "m_";
/// Random hex digits after the prefix (96 bits).
const MEDIA_ID_HEX_DIGITS: usize = 24;
/// How long an upload's `media_ref` keeps naming its media (seconds).
pub const MEDIA_REF_TTL_SECS: u64 = 24 * 60 * 60;

/// A new random media id: `m_` + 24 hex digits.
pub fn new_media_id() -> String {
    let random: [u8; MEDIA_ID_HEX_DIGITS / 2] = rand::random();
    format!("{MEDIA_ID_PREFIX}{}", hex::encode(random))
}

/// Whether `id` has the shape of a media id (anything else cannot name stored media).
pub fn is_media_id(id: &str) -> bool {
    id.strip_prefix(MEDIA_ID_PREFIX).is_some_and(|digits| {
        digits.len() == MEDIA_ID_HEX_DIGITS
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// One stored item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRecord {
    /// Its id.
    pub media_id: String,
    /// What sort of media it is.
    pub kind: MediaKind,
    /// MIME type.
    pub mime: String,
    /// Size in bytes.
    pub size: u64,
    /// Original file name, if the uploader gave one.
    pub filename: Option<String>,
    /// Hex SHA-256 of the bytes (lower case).
    pub sha256: String,
    /// When it was stored (ms since the epoch).
    pub created_ms: u64,
}

impl MediaRecord {
    /// The item as the protocol describes it (`media.offer`, `message.media`).
    pub fn to_media_ref(&self) -> MediaRef {
        MediaRef {
            media_id: Some(self.media_id.clone()),
            kind: Some(self.kind),
            mime: Some(self.mime.clone()),
            size: Some(self.size),
            filename: self.filename.clone(),
        }
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            ("kind", kind_name(self.kind).to_owned()),
            ("mime", self.mime.clone()),
            ("size", self.size.to_string()),
            ("sha256", self.sha256.clone()),
            ("created_ms", self.created_ms.to_string()),
        ];
        if let Some(filename) = &self.filename {
            fields.push(("filename", filename.clone()));
        }
        fields
    }

    fn from_fields(media_id: &str, mut fields: HashMap<String, String>) -> Option<Self> {
        Some(Self {
            media_id: media_id.to_owned(),
            kind: parse_kind(fields.get("kind")?)?,
            mime: fields.remove("mime")?,
            size: fields.get("size")?.parse().ok()?,
            filename: fields.remove("filename"),
            sha256: fields.remove("sha256")?,
            created_ms: fields.get("created_ms")?.parse().ok()?,
        })
    }
}

/// The kind's wire name.
pub fn kind_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "image",
        MediaKind::Audio => "audio",
        MediaKind::Video => "video",
        MediaKind::Document => "document",
        MediaKind::Voice => "voice",
    }
}

fn parse_kind(name: &str) -> Option<MediaKind> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

/// Records `record` for `account`, and `media_ref` → its id for [`MEDIA_REF_TTL_SECS`].
pub async fn save<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    record: &MediaRecord,
    media_ref: &str,
) -> redis::RedisResult<()> {
    let keys = AccountKeys::new(account);
    redis::pipe()
        .atomic()
        .hset_multiple(keys.media(&record.media_id), &record.fields())
        .ignore()
        .set_ex(
            keys.media_ref(media_ref),
            &record.media_id,
            MEDIA_REF_TTL_SECS,
        )
        .ignore()
        .query_async(conn)
        .await
}

/// The record of `media_id` of `account`, if it has one.
pub async fn load<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    media_id: &str,
) -> redis::RedisResult<Option<MediaRecord>> {
    if !is_media_id(media_id) {
        return Ok(None);
    }
    let fields: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(account).media(media_id))
        .query_async(conn)
        .await?;
    if fields.is_empty() {
        return Ok(None);
    }
    Ok(MediaRecord::from_fields(media_id, fields))
}

/// The media id an upload's `media_ref` names, within [`MEDIA_REF_TTL_SECS`] of the upload.
pub async fn resolve_ref<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    media_ref: &str,
) -> redis::RedisResult<Option<String>> {
    redis::cmd("GET")
        .arg(AccountKeys::new(account).media_ref(media_ref))
        .query_async(conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_have_the_media_id_shape_and_differ() {
        let (a, b) = (new_media_id(), new_media_id());
        assert!(is_media_id(&a), "{a}");
        assert_eq!(a.len(), 2 + MEDIA_ID_HEX_DIGITS);
        assert_ne!(a, b);
    }

    #[test]
    fn other_strings_are_not_media_ids() {
        for id in [
            "",
            "m_",
            "m_0123456789abcdef0123456",
            "m_0123456789abcdef012345678",
            "m_0123456789ABCDEF01234567",
            "x_0123456789abcdef01234567",
            "m_0123456789abcdef0123456g",
        ] {
            assert!(!is_media_id(id), "{id}");
        }
    }

    #[test]
    fn a_record_survives_its_redis_fields() {
        let record = MediaRecord {
            media_id: new_media_id(),
            kind: MediaKind::Voice,
            mime: "audio/ogg".into(),
            size: 42,
            filename: None,
            sha256: "ab".repeat(32),
            created_ms: 1_700_000_000_000,
        };
        let fields = record
            .fields()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect();
        assert_eq!(
            MediaRecord::from_fields(&record.media_id, fields),
            Some(record.clone())
        );
        let with_name = MediaRecord {
            filename: Some("note.ogg".into()),
            ..record
        };
        let fields = with_name
            .fields()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect();
        assert_eq!(
            MediaRecord::from_fields(&with_name.media_id, fields),
            Some(with_name.clone())
        );
        assert_eq!(
            with_name.to_media_ref().filename.as_deref(),
            Some("note.ogg")
        );
    }

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in [
            MediaKind::Image,
            MediaKind::Audio,
            MediaKind::Video,
            MediaKind::Document,
            MediaKind::Voice,
        ] {
            assert_eq!(parse_kind(kind_name(kind)), Some(kind));
        }
    }
}
