//! Why the media store failed: a bad store URL, a directory that cannot be made, or the
//! object store refusing an operation.

use std::path::PathBuf;

/// Why a store cannot be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum MediaStoreError {
    /// The URL names no supported store.
    #[error("unsupported media store {0:?}: use file:///abs/dir or s3://bucket[/prefix]")]
    BadUrl(String),
    /// The local directory cannot be created.
    #[error("cannot create media directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The store refused an operation (or could not be built).
    #[error(transparent)]
    Store(#[from] object_store::Error),
}
