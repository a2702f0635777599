//! Where media bytes live: a directory or an S3 bucket, through the `object_store` crate.
//! Objects are stored at `[<prefix>/]<account>/<media_id>`; writes go through multipart
//! uploads ([`MediaWriter`]) and reads stream in [`MEDIA_CHUNK_BYTES`] pieces, so neither
//! ever holds a whole item in memory.
//!
//! The store is named by a URL (`IRIS_MEDIA_STORE`):
//! - `file:///abs/dir`: a local directory, created if missing (the default is
//!   `<system temp dir>/iris-media`).
//! - `s3://bucket[/prefix]`: an S3 bucket; endpoint, region and credentials come from the
//!   standard AWS environment variables (`AWS_ENDPOINT_URL`, `AWS_REGION`,
//!   `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true` for plain-HTTP
//!   endpoints, ...).

use std::path::PathBuf;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::{self, BoxStream, StreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::frame::MEDIA_CHUNK_BYTES;
pub use super::store_error::MediaStoreError;
use super::writer::MediaWriter;

/// Directory under the system temp dir used when no store is configured.
pub const DEFAULT_DIR_NAME: &str = "iris-media";
/// Multipart part size on S3: every part but the last must be at least 5 MiB there.
const S3_PART_BYTES: usize = 5 * 1024 * 1024;
/// Multipart part size on a local directory (parts are plain file writes; smaller parts
/// keep an upload's buffer small).
const LOCAL_PART_BYTES: usize = 1024 * 1024;

/// A handle on the media store; cheap to clone.
#[derive(Debug, Clone)]
pub struct MediaStore {
    store: Arc<dyn ObjectStore>,
    /// Path every object lives under (empty for a local directory).
    root: Path,
    /// Multipart part size suited to the backend.
    part_bytes: usize,
    /// The URL it was opened from, for logs.
    url: Arc<str>,
}

impl MediaStore {
    /// Opens the store named by `url`, or the default directory when `None`.
    pub fn open(url: Option<&str>) -> Result<Self, MediaStoreError> {
        match url.map(str::trim).filter(|url| !url.is_empty()) {
            None => Self::local(std::env::temp_dir().join(DEFAULT_DIR_NAME)),
            Some(url) => {
                if let Some(path) = url.strip_prefix("file://") {
                    if !path.starts_with('/') {
                        return Err(MediaStoreError::BadUrl(url.to_owned()));
                    }
                    Self::local(PathBuf::from(path))
                } else if let Some(rest) = url.strip_prefix("s3://") {
                    Self::s3(url, rest)
                } else {
                    Err(MediaStoreError::BadUrl(url.to_owned()))
                }
            }
        }
    }

    /// A local directory, created if missing.
    fn local(dir: PathBuf) -> Result<Self, MediaStoreError> {
        std::fs::create_dir_all(&dir).map_err(|source| MediaStoreError::Directory {
            path: dir.clone(),
            source,
        })?;
        let store = LocalFileSystem::new_with_prefix(&dir)?;
        Ok(Self {
            store: Arc::new(store),
            root: Path::default(),
            part_bytes: LOCAL_PART_BYTES,
            url: format!("file://{}", dir.display()).into(),
        })
    }

    /// An S3 bucket configured from the AWS environment; `rest` is `bucket[/prefix]`.
    fn s3(url: &str, rest: &str) -> Result<Self, MediaStoreError> {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(MediaStoreError::BadUrl(url.to_owned()));
        }
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()?;
        Ok(Self {
            store: Arc::new(store),
            root: Path::from(prefix),
            part_bytes: S3_PART_BYTES,
            url: url.into(),
        })
    }

    /// The URL the store was opened from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where `media_id` of `account` is stored. Each part is escaped by `object_store`, so
    /// no account name or id can reach outside its own place.
    pub fn location(&self, account: &str, media_id: &str) -> Path {
        self.root.clone().join(account).join(media_id)
    }

    /// Starts writing `media_id` of `account`; the object appears only when the writer
    /// finishes.
    pub async fn writer(
        &self,
        account: &str,
        media_id: &str,
    ) -> Result<MediaWriter, MediaStoreError> {
        let upload = self
            .store
            .put_multipart(&self.location(account, media_id))
            .await?;
        Ok(MediaWriter::new(upload, self.part_bytes))
    }

    /// The bytes of `media_id` of `account`, in pieces of exactly [`MEDIA_CHUNK_BYTES`]
    /// (the last may be shorter). Only one piece is held at a time.
    pub async fn read(
        &self,
        account: &str,
        media_id: &str,
    ) -> Result<BoxStream<'static, Result<Bytes, MediaStoreError>>, MediaStoreError> {
        let object = self.store.get(&self.location(account, media_id)).await?;
        Ok(rechunk(object.into_stream(), MEDIA_CHUNK_BYTES))
    }

    /// Removes `media_id` of `account` (missing objects are not an error).
    pub async fn delete(&self, account: &str, media_id: &str) -> Result<(), MediaStoreError> {
        match self.store.delete(&self.location(account, media_id)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(err) => Err(err.into()),
        }
    }
}

/// Regroups a byte stream (the store's own piece size: 8 KiB for files, whatever the
/// network delivers for S3) into pieces of `size` bytes, the last one possibly shorter.
fn rechunk(
    pieces: BoxStream<'static, object_store::Result<Bytes>>,
    size: usize,
) -> BoxStream<'static, Result<Bytes, MediaStoreError>> {
    let state = Some((pieces, BytesMut::new()));
    stream::unfold(state, move |state| async move {
        let (mut pieces, mut buffer) = state?;
        loop {
            if buffer.len() >= size {
                let chunk = buffer.split_to(size).freeze();
                return Some((Ok(chunk), Some((pieces, buffer))));
            }
            match pieces.next().await {
                Some(Ok(piece)) => buffer.extend_from_slice(&piece),
                Some(Err(err)) => return Some((Err(err.into()), None)),
                None if buffer.is_empty() => return None,
                None => return Some((Ok(buffer.split().freeze()), None)),
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "iris-media-store-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[tokio::test]
    async fn a_written_object_reads_back_in_full_chunks() {
        let dir = scratch("roundtrip");
        let store = MediaStore::open(Some(&format!("file://{}", dir.display()))).unwrap();
        let data: Vec<u8> = (0..(2 * MEDIA_CHUNK_BYTES + 123))
            .map(|i| (i % 251) as u8)
            .collect();
        let mut writer = store.writer("alice", "m_1").await.unwrap();
        for piece in data.chunks(10_000) {
            writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
        }
        let digest = writer.finish(data.len() as u64, None).await.unwrap();
        assert_eq!(digest.len(), 64);
        let pieces: Vec<Bytes> = store
            .read("alice", "m_1")
            .await
            .unwrap()
            .map(|piece| piece.unwrap())
            .collect()
            .await;
        let sizes: Vec<usize> = pieces.iter().map(Bytes::len).collect();
        assert_eq!(sizes, [MEDIA_CHUNK_BYTES, MEDIA_CHUNK_BYTES, 123]);
        assert_eq!(pieces.concat(), data);
        assert!(dir.join("alice").join("m_1").is_file());
        store.delete("alice", "m_1").await.unwrap();
        store.delete("alice", "m_1").await.unwrap();
        assert!(!dir.join("alice").join("m_1").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn an_aborted_writer_leaves_no_file() {
        let dir = scratch("abort");
        let store = MediaStore::open(Some(&format!("file://{}", dir.display()))).unwrap();
        let mut writer = store.writer("bob", "m_2").await.unwrap();
        writer
            .write(Bytes::from(vec![1u8; LOCAL_PART_BYTES + 10]))
            .await
            .unwrap();
        writer.abort().await;
        let left: Vec<_> = std::fs::read_dir(dir.join("bob"))
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn urls_other_than_file_and_s3_are_refused() {
        assert!(matches!(
            MediaStore::open(Some("ftp://x")),
            Err(MediaStoreError::BadUrl(_))
        ));
        assert!(matches!(
            MediaStore::open(Some("file://relative/dir")),
            Err(MediaStoreError::BadUrl(_))
        ));
        assert!(matches!(
            MediaStore::open(Some("s3:///prefix")),
            Err(MediaStoreError::BadUrl(_))
        ));
    }

    #[test]
    fn locations_are_account_then_media_id_under_the_prefix() {
        let store = MediaStore {
            store: Arc::new(object_store::memory::InMemory::new()),
            root: Path::from("iris/media"),
            part_bytes: LOCAL_PART_BYTES,
            url: "memory://".into(),
        };
        assert_eq!(
            store.location("alice", "m_1").as_ref(),
            "iris/media/alice/m_1"
        );
        assert_eq!(
            store.location("..", "m_1").as_ref(),
            "iris/media/%2E%2E/m_1"
        );
    }
}
