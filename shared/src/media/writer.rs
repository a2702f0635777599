//! [`MediaWriter`]: one media item being written to the store as a multipart upload,
//! hashed (SHA-256) and counted as it goes. Nothing is visible in the store until
//! [`MediaWriter::finish`] succeeds; a failed check or [`MediaWriter::abort`] leaves nothing.

use bytes::Bytes;
use object_store::{MultipartUpload, WriteMultipart};
use sha2::{Digest, Sha256};

use super::store_error::MediaStoreError;

/// Parts being sent to the store at once. One part in flight plus one being filled bounds
/// a writer's memory to about two parts.
const MAX_PARTS_IN_FLIGHT: usize = 1;

/// Why a finished upload was not kept.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// Fewer or more bytes than announced.
    #[error("size mismatch: announced {announced} bytes, received {received}")]
    SizeMismatch {
        /// The size the writer was told to expect.
        announced: u64,
        /// The bytes written.
        received: u64,
    },
    /// The bytes do not hash to the announced digest.
    #[error("sha256 mismatch: announced {announced}, the received bytes hash to {actual}")]
    Sha256Mismatch {
        /// The announced hex digest.
        announced: String,
        /// The hex digest of the bytes written.
        actual: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MediaStoreError),
}

/// An item being written.
#[derive(Debug)]
pub struct MediaWriter {
    upload: WriteMultipart,
    hasher: Sha256,
    written: u64,
}

impl MediaWriter {
    pub(super) fn new(upload: Box<dyn MultipartUpload>, part_bytes: usize) -> Self {
        Self {
            upload: WriteMultipart::new_with_chunk_size(upload, part_bytes),
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// Appends `bytes`. Returns once the store has room for more, so a caller that awaits
    /// each write never buffers more than about two parts.
    pub async fn write(&mut self, bytes: Bytes) -> Result<(), MediaStoreError> {
        self.hasher.update(&bytes);
        self.written += bytes.len() as u64;
        self.upload.put(bytes);
        self.upload.wait_for_capacity(MAX_PARTS_IN_FLIGHT).await?;
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Publishes the object if exactly `size` bytes were written and, when `sha256` is
    /// given, they hash to it (hex, any case); otherwise aborts. Returns the hex digest.
    pub async fn finish(self, size: u64, sha256: Option<&str>) -> Result<String, FinishError> {
        let actual = hex::encode(self.hasher.clone().finalize());
        if self.written != size {
            let received = self.written;
            self.abort().await;
            return Err(FinishError::SizeMismatch {
                announced: size,
                received,
            });
        }
        if let Some(announced) = sha256.filter(|announced| !announced.eq_ignore_ascii_case(&actual))
        {
            let announced = announced.to_owned();
            self.abort().await;
            return Err(FinishError::Sha256Mismatch { announced, actual });
        }
        self.upload
            .finish()
            .await
            .map_err(|err| FinishError::Store(err.into()))?;
        Ok(actual)
    }

    /// Drops everything written (parts already sent are deleted from the store). Failures
    /// are logged: there is nobody left to tell.
    pub async fn abort(self) {
        if let Err(err) = self.upload.abort().await {
            tracing::warn!(%err, "cannot abort a media upload; the store may keep its parts");
        }
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::ObjectStoreExt;

    use super::*;

    const PART: usize = 1000;

    async fn writer(store: &InMemory, path: &Path) -> MediaWriter {
        MediaWriter::new(store.put_multipart(path).await.unwrap(), PART)
    }

    async fn write_all(writer: &mut MediaWriter, data: &[u8]) {
        for piece in data.chunks(300) {
            writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
        }
    }

    #[tokio::test]
    async fn matching_bytes_are_published_with_their_digest() {
        let (store, path) = (InMemory::new(), Path::from("a/m_1"));
        let data = vec![42u8; 2 * PART + 1];
        let mut writer = writer(&store, &path).await;
        write_all(&mut writer, &data).await;
        assert_eq!(writer.written(), data.len() as u64);
        let expected = hex::encode(Sha256::digest(&data));
        let digest = writer
            .finish(data.len() as u64, Some(&expected.to_uppercase()))
            .await
            .unwrap();
        assert_eq!(digest, expected);
        let stored = store.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(&stored[..], &data[..]);
    }

    #[tokio::test]
    async fn a_wrong_digest_or_size_publishes_nothing() {
        let (store, path) = (InMemory::new(), Path::from("a/m_2"));
        let data = vec![7u8; PART + 5];
        let mut bad_digest = writer(&store, &path).await;
        write_all(&mut bad_digest, &data).await;
        let refused = bad_digest
            .finish(data.len() as u64, Some(&"0".repeat(64)))
            .await;
        assert!(
            matches!(refused, Err(FinishError::Sha256Mismatch { .. })),
            "{refused:?}"
        );
        let mut bad_size = writer(&store, &path).await;
        write_all(&mut bad_size, &data).await;
        let refused = bad_size.finish(data.len() as u64 + 1, None).await;
        assert!(
            matches!(
                refused,
                Err(FinishError::SizeMismatch { announced, received })
                    if announced == data.len() as u64 + 1 && received == data.len() as u64
            ),
            "{refused:?}"
        );
        assert!(store.get(&path).await.is_err(), "an object was published");
    }
}
