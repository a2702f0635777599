//! The binary WebSocket frames that carry media bytes, in both directions: a two-byte
//! header, the transfer's id, then the payload.
//!
//! ```text
//! byte 0        frame kind: 0x01 upload chunk (app → server), 0x02 pull chunk (server → app)
//! byte 1        L, the length of the id in bytes (1..=255)
//! bytes 2..2+L  the id in UTF-8: the upload's `media_ref`, or the pulled `media_id`
//! the rest      payload bytes (at most MEDIA_CHUNK_BYTES)
//! ```
//!
//! The id travels in every chunk so several transfers may interleave on one connection;
//! the chunks of one transfer are sent in order.

use bytes::{BufMut, Bytes, BytesMut};

/// Largest payload of one binary media frame (64 KiB). The server's pull chunks are
/// exactly this long, except the last chunk of an item.
pub const MEDIA_CHUNK_BYTES: usize = 64 * 1024;
/// Longest id a header can carry: its length must fit in one byte.
pub const MAX_ID_BYTES: usize = u8::MAX as usize;
/// Bytes before the id: the kind and the id length.
const FIXED_HEADER_BYTES: usize = 2;
/// Largest binary media frame on the wire: the longest header plus a full payload. The
/// WebSocket codec must accept messages of this size.
pub const MAX_MEDIA_FRAME_BYTES: usize = FIXED_HEADER_BYTES + MAX_ID_BYTES + MEDIA_CHUNK_BYTES;

/// What a binary media frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKind {
    /// Bytes of an upload, app → server; the id is the upload's `media_ref`.
    Upload,
    /// Bytes of a pulled item, server → app; the id is its `media_id`.
    Pull,
}

impl ChunkKind {
    /// The kind's header byte.
    pub fn byte(self) -> u8 {
        match self {
            Self::Upload => 0x01,
            Self::Pull => 0x02,
        }
    }

    fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0x01 => Some(Self::Upload),
            0x02 => Some(Self::Pull),
            _ => None,
        }
    }
}

/// One decoded binary media frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaChunk {
    /// Upload or pull.
    pub kind: ChunkKind,
    /// The `media_ref` (upload) or `media_id` (pull).
    pub id: String,
    /// The bytes (shares the frame's buffer, no copy).
    pub payload: Bytes,
}

/// Why a binary frame is not a media frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// Shorter than its own header says.
    #[error("binary frame too short for its header ({0} bytes)")]
    Truncated(usize),
    /// Byte 0 names no frame kind.
    #[error("unknown binary frame kind 0x{0:02x}")]
    UnknownKind(u8),
    /// The id is empty (L = 0).
    #[error("binary frame with an empty id")]
    EmptyId,
    /// The id is not UTF-8.
    #[error("binary frame id is not UTF-8")]
    IdNotUtf8,
    /// More payload than [`MEDIA_CHUNK_BYTES`].
    #[error("binary frame payload of {0} bytes exceeds {MEDIA_CHUNK_BYTES}")]
    PayloadTooLarge(usize),
}

/// Why a media frame cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The id is empty or longer than [`MAX_ID_BYTES`].
    #[error("id must be 1..={MAX_ID_BYTES} bytes, got {0}")]
    BadIdLength(usize),
    /// More payload than [`MEDIA_CHUNK_BYTES`].
    #[error("payload of {0} bytes exceeds {MEDIA_CHUNK_BYTES}")]
    PayloadTooLarge(usize),
}

/// Builds one binary media frame.
pub fn encode(kind: ChunkKind, id: &str, payload: &[u8]) -> Result<Bytes, EncodeError> {
    let id_len = u8::try_from(id.len())
        .ok()
        .filter(|&len| len > 0)
        .ok_or(EncodeError::BadIdLength(id.len()))?;
    if payload.len() > MEDIA_CHUNK_BYTES {
        return Err(EncodeError::PayloadTooLarge(payload.len()));
    }
    let mut frame = BytesMut::with_capacity(FIXED_HEADER_BYTES + id.len() + payload.len());
    frame.put_u8(kind.byte());
    frame.put_u8(id_len);
    frame.put_slice(id.as_bytes());
    frame.put_slice(payload);
    Ok(frame.freeze())
}

/// Splits a received binary frame into kind, id and payload (the payload is a view of
/// `frame`, not a copy).
pub fn decode(frame: Bytes) -> Result<MediaChunk, ChunkError> {
    if frame.len() < FIXED_HEADER_BYTES {
        return Err(ChunkError::Truncated(frame.len()));
    }
    let kind = ChunkKind::from_byte(frame[0]).ok_or(ChunkError::UnknownKind(frame[0]))?;
    let id_len = usize::from(frame[1]);
    if id_len == 0 {
        return Err(ChunkError::EmptyId);
    }
    let payload_start = FIXED_HEADER_BYTES + id_len;
    if frame.len() < payload_start {
        return Err(ChunkError::Truncated(frame.len()));
    }
    let id = std::str::from_utf8(&frame[FIXED_HEADER_BYTES..payload_start])
        .map_err(|_| ChunkError::IdNotUtf8)?
        .to_owned();
    let payload = frame.slice(payload_start..);
    if payload.len() > MEDIA_CHUNK_BYTES {
        return Err(ChunkError::PayloadTooLarge(payload.len()));
    }
    Ok(MediaChunk { kind, id, payload })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips_with_its_kind_id_and_payload() {
        let frame = encode(ChunkKind::Upload, "photo-1", b"abc").unwrap();
        assert_eq!(&frame[..], b"\x01\x07photo-1abc");
        let chunk = decode(frame).unwrap();
        assert_eq!(chunk.kind, ChunkKind::Upload);
        assert_eq!(chunk.id, "photo-1");
        assert_eq!(&chunk.payload[..], b"abc");
    }

    #[test]
    fn pull_frames_carry_kind_two_and_may_be_full_size() {
        let payload = vec![7u8; MEDIA_CHUNK_BYTES];
        let id = "m_0123456789abcdef01234567";
        let frame = encode(ChunkKind::Pull, id, &payload).unwrap();
        assert_eq!(frame[0], 0x02);
        assert_eq!(frame.len(), 2 + id.len() + MEDIA_CHUNK_BYTES);
        let chunk = decode(frame).unwrap();
        assert_eq!((chunk.kind, chunk.id.as_str()), (ChunkKind::Pull, id));
        assert_eq!(chunk.payload.len(), MEDIA_CHUNK_BYTES);
    }

    #[test]
    fn an_empty_payload_is_allowed() {
        let chunk = decode(encode(ChunkKind::Upload, "r", b"").unwrap()).unwrap();
        assert!(chunk.payload.is_empty());
    }

    #[test]
    fn the_longest_header_plus_a_full_chunk_is_the_largest_frame() {
        let id = "x".repeat(MAX_ID_BYTES);
        let frame = encode(ChunkKind::Upload, &id, &vec![0; MEDIA_CHUNK_BYTES]).unwrap();
        assert_eq!(frame.len(), MAX_MEDIA_FRAME_BYTES);
        assert!(decode(frame).is_ok());
    }

    #[test]
    fn ids_must_fit_the_length_byte_and_payloads_the_chunk_size() {
        assert_eq!(
            encode(ChunkKind::Upload, "", b"x"),
            Err(EncodeError::BadIdLength(0))
        );
        let long = "x".repeat(MAX_ID_BYTES + 1);
        assert_eq!(
            encode(ChunkKind::Upload, &long, b"x"),
            Err(EncodeError::BadIdLength(MAX_ID_BYTES + 1))
        );
        let big = vec![0; MEDIA_CHUNK_BYTES + 1];
        assert_eq!(
            encode(ChunkKind::Upload, "r", &big),
            Err(EncodeError::PayloadTooLarge(MEDIA_CHUNK_BYTES + 1))
        );
    }

    #[test]
    fn malformed_frames_are_refused_with_the_reason() {
        assert_eq!(
            decode(Bytes::from_static(b"\x01")),
            Err(ChunkError::Truncated(1))
        );
        assert_eq!(
            decode(Bytes::from_static(b"\x09\x01ax")),
            Err(ChunkError::UnknownKind(9))
        );
        assert_eq!(
            decode(Bytes::from_static(b"\x01\x00abc")),
            Err(ChunkError::EmptyId)
        );
        assert_eq!(
            decode(Bytes::from_static(b"\x01\x05ab")),
            Err(ChunkError::Truncated(4))
        );
        assert_eq!(
            decode(Bytes::from_static(b"\x01\x02\xff\xfeabc")),
            Err(ChunkError::IdNotUtf8)
        );
        let mut oversize = b"\x01\x01r".to_vec();
        oversize.extend(vec![0; MEDIA_CHUNK_BYTES + 1]);
        assert_eq!(
            decode(Bytes::from(oversize)),
            Err(ChunkError::PayloadTooLarge(MEDIA_CHUNK_BYTES + 1))
        );
    }
}
