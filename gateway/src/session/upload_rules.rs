//! What a `media.upload.start` must announce to be accepted: a usable `media_ref`, a kind,
//! a MIME type that fits the kind, a size within the limit and a sane file name. Pure
//! rules, so they are tested without a socket.

use iris_shared::media::frame::MAX_ID_BYTES;
use iris_shared::protocol::{ErrorCode, MediaKind, MediaUploadStart};

/// Longest `media_ref`, in characters (it must also fit a binary frame header in bytes).
pub(super) const MAX_MEDIA_REF_CHARS: usize = 128;
/// Longest file name, in characters.
const MAX_FILENAME_CHARS: usize = 255;
/// Longest MIME type or subtype name (RFC 6838 restricted-name).
const MAX_MIME_NAME_CHARS: usize = 127;

/// An accepted announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Announced {
    /// The app's reference, carried by each binary chunk.
    pub media_ref: String,
    /// What sort of media it is.
    pub kind: MediaKind,
    /// MIME type as given.
    pub mime: String,
    /// Exact size in bytes.
    pub size: u64,
    /// Original file name, if given.
    pub filename: Option<String>,
}

/// Why an announcement is refused: the error code and message to answer with.
pub(super) type Refusal = (ErrorCode, String);

/// Checks a `media.upload.start`; `max_bytes` is `IRIS_MEDIA_MAX_BYTES`.
pub(super) fn check_start(start: MediaUploadStart, max_bytes: u64) -> Result<Announced, Refusal> {
    let unsupported = |message: String| (ErrorCode::Unsupported, message);
    let media_ref = start
        .media_ref
        .ok_or_else(|| unsupported("media.upload.start needs a media_ref".into()))?;
    if !is_usable_ref(&media_ref) {
        return Err(unsupported(format!(
            "media_ref must be 1-{MAX_MEDIA_REF_CHARS} characters (at most {MAX_ID_BYTES} bytes) \
             without control characters"
        )));
    }
    let kind = start
        .kind
        .ok_or_else(|| unsupported("media.upload.start needs a kind".into()))?;
    let mime = start
        .mime
        .ok_or_else(|| unsupported("media.upload.start needs a mime type".into()))?;
    if !mime_fits(kind, &mime) {
        return Err(unsupported(format!(
            "mime {mime:?} is not a type/subtype that fits kind {}",
            iris_shared::media::record::kind_name(kind)
        )));
    }
    let size = start
        .size
        .ok_or_else(|| unsupported("media.upload.start needs a size".into()))?;
    if size > max_bytes {
        return Err((
            ErrorCode::MediaTooLarge,
            format!("{size} bytes exceeds the {max_bytes}-byte media limit"),
        ));
    }
    if size == 0 {
        return Err(unsupported("an upload needs at least one byte".into()));
    }
    if let Some(filename) = &start.filename {
        if filename.chars().count() > MAX_FILENAME_CHARS || filename.chars().any(char::is_control) {
            return Err(unsupported(format!(
                "filename must be at most {MAX_FILENAME_CHARS} characters without control characters"
            )));
        }
    }
    Ok(Announced {
        media_ref,
        kind,
        mime,
        size,
        filename: start.filename.filter(|name| !name.is_empty()),
    })
}

/// Whether `media_ref` can name an upload: 1-128 characters, fits a frame header, no
/// control characters.
fn is_usable_ref(media_ref: &str) -> bool {
    let chars = media_ref.chars().count();
    (1..=MAX_MEDIA_REF_CHARS).contains(&chars)
        && media_ref.len() <= MAX_ID_BYTES
        && !media_ref.chars().any(char::is_control)
}

/// Whether `mime` is `type/subtype` (parameters after `;` allowed) and its type fits
/// `kind`: `image/*` for images, `audio/*` for audio and voice, `video/*` for video,
/// anything for documents.
fn mime_fits(kind: MediaKind, mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let Some((main, sub)) = essence.split_once('/') else {
        return false;
    };
    if !is_mime_name(main) || !is_mime_name(sub) {
        return false;
    }
    let wanted = match kind {
        MediaKind::Image => "image",
        MediaKind::Audio | MediaKind::Voice => "audio",
        MediaKind::Video => "video",
        MediaKind::Document => return true,
    };
    main.eq_ignore_ascii_case(wanted)
}

/// RFC 6838 restricted-name: a letter or digit, then letters, digits and `!#$&-^_.+`.
fn is_mime_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= MAX_MIME_NAME_CHARS
        && bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 1000;

    fn start(kind: MediaKind, mime: &str, size: u64) -> MediaUploadStart {
        MediaUploadStart {
            media_ref: Some("ref-1".into()),
            kind: Some(kind),
            mime: Some(mime.into()),
            size: Some(size),
            filename: Some("a.bin".into()),
        }
    }

    fn code(result: Result<Announced, Refusal>) -> Option<ErrorCode> {
        result.err().map(|(code, _)| code)
    }

    #[test]
    fn a_complete_announcement_is_accepted() {
        let announced = check_start(start(MediaKind::Image, "image/png", 10), MAX).unwrap();
        assert_eq!(announced.media_ref, "ref-1");
        assert_eq!(announced.size, 10);
        assert_eq!(announced.filename.as_deref(), Some("a.bin"));
    }

    #[test]
    fn mime_types_must_fit_their_kind() {
        for (kind, mime) in [
            (MediaKind::Image, "image/jpeg"),
            (MediaKind::Audio, "audio/mpeg"),
            (MediaKind::Voice, "audio/ogg; codecs=opus"),
            (MediaKind::Video, "VIDEO/mp4"),
            (MediaKind::Document, "application/pdf"),
            (MediaKind::Document, "image/png"),
        ] {
            assert!(check_start(start(kind, mime, 1), MAX).is_ok(), "{mime}");
        }
        for (kind, mime) in [
            (MediaKind::Image, "video/mp4"),
            (MediaKind::Voice, "video/ogg"),
            (MediaKind::Audio, "image/png"),
            (MediaKind::Document, "pdf"),
            (MediaKind::Document, "application/"),
            (MediaKind::Document, "/pdf"),
            (MediaKind::Image, "image/png/x"),
            (MediaKind::Image, "image/p ng"),
        ] {
            assert_eq!(
                code(check_start(start(kind, mime, 1), MAX)),
                Some(ErrorCode::Unsupported),
                "{mime}"
            );
        }
    }

    #[test]
    fn sizes_over_the_limit_are_media_too_large() {
        assert!(check_start(start(MediaKind::Image, "image/png", MAX), MAX).is_ok());
        assert_eq!(
            code(check_start(
                start(MediaKind::Image, "image/png", MAX + 1),
                MAX
            )),
            Some(ErrorCode::MediaTooLarge)
        );
        assert_eq!(
            code(check_start(start(MediaKind::Image, "image/png", 0), MAX)),
            Some(ErrorCode::Unsupported)
        );
    }

    #[test]
    fn missing_fields_and_bad_refs_are_unsupported() {
        let complete = start(MediaKind::Image, "image/png", 1);
        let broken = [
            MediaUploadStart {
                media_ref: None,
                ..complete.clone()
            },
            MediaUploadStart {
                media_ref: Some(String::new()),
                ..complete.clone()
            },
            MediaUploadStart {
                media_ref: Some("x".repeat(MAX_MEDIA_REF_CHARS + 1)),
                ..complete.clone()
            },
            MediaUploadStart {
                media_ref: Some("é".repeat(MAX_MEDIA_REF_CHARS)),
                ..complete.clone()
            },
            MediaUploadStart {
                media_ref: Some("a\nb".into()),
                ..complete.clone()
            },
            MediaUploadStart {
                kind: None,
                ..complete.clone()
            },
            MediaUploadStart {
                mime: None,
                ..complete.clone()
            },
            MediaUploadStart {
                size: None,
                ..complete.clone()
            },
            MediaUploadStart {
                filename: Some("x".repeat(MAX_FILENAME_CHARS + 1)),
                ..complete.clone()
            },
        ];
        for start in broken {
            assert_eq!(
                code(check_start(start.clone(), MAX)),
                Some(ErrorCode::Unsupported),
                "{start:?}"
            );
        }
        let longest = MediaUploadStart {
            media_ref: Some("x".repeat(MAX_MEDIA_REF_CHARS)),
            ..complete
        };
        assert!(check_start(longest, MAX).is_ok());
    }
}
