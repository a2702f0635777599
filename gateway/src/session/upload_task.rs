//! The writer task of one upload: a task on the session's arbiter that owns the upload's
//! [`MediaWriter`] and is fed the upload's chunks, in order, through a bounded channel.
//!
//! Why a task and a channel rather than writing from the actor: a store write is async
//! and the writer must be awaited between chunks, but the actor cannot lend its state to
//! a future. The channel keeps each upload's chunks in order, lets several uploads of one
//! connection write side by side, and bounds the memory an upload holds: when its queue is
//! full the session waits (`ctx.wait`) before reading more from the socket. The task
//! outlives the session, so an upload abandoned by a dropped connection is still aborted.

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use iris_shared::media::store::MediaStore;
use iris_shared::media::writer::{FinishError, MediaWriter};

/// Chunks queued per upload before the session stops reading the socket (1 MiB).
pub(super) const UPLOAD_QUEUE_CHUNKS: usize = 16;

/// What the session tells an upload's writer task.
#[derive(Debug)]
pub(super) enum UploadCommand {
    /// The next bytes.
    Chunk(Bytes),
    /// All bytes were sent: keep the object if it has `size` bytes hashing to `sha256`.
    Finish {
        /// Announced size.
        size: u64,
        /// Announced hex SHA-256.
        sha256: String,
        /// Where the outcome goes.
        reply: oneshot::Sender<UploadOutcome>,
    },
}

/// How an upload ended.
#[derive(Debug)]
pub(super) enum UploadOutcome {
    /// The object is in the store.
    Kept {
        /// Its hex SHA-256 (lower case).
        sha256: String,
    },
    /// The bytes did not match what was announced; nothing was kept.
    Refused(FinishError),
    /// The store failed; nothing was kept.
    Failed(String),
}

/// Starts the writer task of `media_id` of `account`; returns the channel feeding it.
/// Dropping the sender without a `Finish` aborts the upload.
pub(super) fn spawn(
    store: MediaStore,
    account: String,
    media_id: String,
) -> mpsc::Sender<UploadCommand> {
    let (commands, queue) = mpsc::channel(UPLOAD_QUEUE_CHUNKS);
    actix::spawn(run(store, account, media_id, queue));
    commands
}

async fn run(
    store: MediaStore,
    account: String,
    media_id: String,
    mut queue: mpsc::Receiver<UploadCommand>,
) {
    // A store failure is kept and reported when the upload ends; until then the chunks
    // are read and dropped, so the session never blocks on a dead writer.
    let (mut writer, mut failure): (Option<MediaWriter>, Option<String>) = match store
        .writer(&account, &media_id)
        .await
    {
        Ok(writer) => (Some(writer), None),
        Err(err) => {
            tracing::warn!(%err, %account, %media_id, "cannot start a media upload in the store");
            (None, Some(err.to_string()))
        }
    };
    while let Some(command) = queue.recv().await {
        match command {
            UploadCommand::Chunk(bytes) => {
                let Some(active) = writer.as_mut() else {
                    continue;
                };
                if let Err(err) = active.write(bytes).await {
                    tracing::warn!(%err, %account, %media_id, "media write failed");
                    failure = Some(err.to_string());
                    if let Some(failed) = writer.take() {
                        failed.abort().await;
                    }
                }
            }
            UploadCommand::Finish {
                size,
                sha256,
                reply,
            } => {
                let outcome = match writer.take() {
                    Some(active) => match active.finish(size, Some(&sha256)).await {
                        Ok(sha256) => UploadOutcome::Kept { sha256 },
                        Err(FinishError::Store(err)) => UploadOutcome::Failed(err.to_string()),
                        Err(refused) => UploadOutcome::Refused(refused),
                    },
                    None => UploadOutcome::Failed(failure.unwrap_or_default()),
                };
                let _ = reply.send(outcome);
                return;
            }
        }
    }
    if let Some(abandoned) = writer {
        tracing::info!(%account, %media_id, written = abandoned.written(), "media upload abandoned; aborting it");
        abandoned.abort().await;
    }
}
