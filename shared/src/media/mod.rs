//! Media: the binary frames that carry its bytes, the store that keeps them, and the
//! Redis records that describe them. See docs/media.md.
//!
//! - [`frame`]: the binary frame header (kind, id) shared by uploads and pulls.
//! - [`store`]: the object store (a directory or S3) and streamed reads.
//! - [`store_error`]: why the store failed.
//! - [`writer`]: one item being written: multipart, hashed, kept only when it checks out.
//! - [`record`]: the per-account metadata and `media_ref` → `media_id` in Redis.

pub mod frame;
pub mod record;
pub mod store;
pub mod store_error;
pub mod writer;
