//! Media uploads on a session: `media.upload.start` announces an item, binary upload
//! chunks carry its bytes to the upload's writer task, and `media.upload.end` checks size
//! and SHA-256, keeps the object, records it and answers `media.offer`. Also the session's
//! transfers in progress ([`MediaTransfers`]) and the routing of media requests.
//!
//! Media requests are served as they arrive, even while a sync replay holds other
//! requests back: their answers do not depend on the outbox, and holding an upload's
//! chunks in memory for the length of a replay would not be bounded.

use std::collections::{HashMap, HashSet};

use actix::prelude::*;
use actix_web_actors::ws;
use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use iris_shared::clock::now_ms;
use iris_shared::media::frame::{self, ChunkKind};
use iris_shared::media::record::{self, MediaRecord};
use iris_shared::media::writer::FinishError;
use iris_shared::protocol::{
    AppBody, AppFrame, ErrorCode, MediaKind, MediaUploadEnd, MediaUploadStart, ServerBody,
    ServerFrame,
};

use super::upload_rules::{self, Announced};
use super::upload_task::{self, UploadCommand, UploadOutcome};
use super::{Phase, Session};
use crate::metrics;

/// Uploads one connection may have in progress at once.
const MAX_UPLOADS_PER_CONNECTION: usize = 4;

/// The media transfers of one connection.
#[derive(Debug, Default)]
pub(super) struct MediaTransfers {
    /// Uploads in progress, by `media_ref`.
    uploads: HashMap<String, Upload>,
    /// Media ids being pulled (see `media_pull.rs`).
    pub(super) pulls: HashSet<String>,
}

/// An upload in progress.
#[derive(Debug)]
struct Upload {
    /// The id its object is written under.
    media_id: String,
    kind: MediaKind,
    mime: String,
    /// Announced size.
    size: u64,
    filename: Option<String>,
    /// Bytes received so far.
    received: u64,
    /// Feeds the upload's writer task; dropping it aborts the upload.
    commands: mpsc::Sender<UploadCommand>,
}

/// Why `media.upload.end` kept nothing.
enum EndFailure {
    /// The bytes did not match the announcement (`unsupported`).
    Refused(String),
    /// The store or Redis failed (`internal`).
    Failed(String),
}

impl Session {
    /// Whether `frame` is a media request, served even while other requests wait for a
    /// replay (see the module docs).
    pub(super) fn is_media_request(&self, frame: &AppFrame) -> bool {
        matches!(self.phase, Phase::Ready)
            && matches!(
                frame.body,
                AppBody::MediaUploadStart(_) | AppBody::MediaUploadEnd(_) | AppBody::MediaPull(_)
            )
    }

    /// Serves a media request.
    pub(super) fn handle_media(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        match frame.body {
            AppBody::MediaUploadStart(start) => self.start_upload(frame.id, start, ctx),
            AppBody::MediaUploadEnd(end) => self.end_upload(frame.id, end, ctx),
            AppBody::MediaPull(pull) => self.start_pull(frame.id, pull, ctx),
            _ => {}
        }
    }

    /// `media.upload.start`: answered only when refused; the upload's answer comes with
    /// `media.upload.end`.
    fn start_upload(
        &mut self,
        id: Option<u64>,
        start: MediaUploadStart,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(device) = &self.device else { return };
        let announced = match upload_rules::check_start(start, self.state.limits.media_max_bytes) {
            Ok(announced) => announced,
            Err((code, message)) => return self.send_error(ctx, id, code, message),
        };
        let Announced {
            media_ref,
            kind,
            mime,
            size,
            filename,
        } = announced;
        if self.media.uploads.contains_key(&media_ref) {
            let message = format!("upload {media_ref:?} is already in progress");
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        }
        if self.media.uploads.len() >= MAX_UPLOADS_PER_CONNECTION {
            let message = format!(
                "at most {MAX_UPLOADS_PER_CONNECTION} uploads may be in progress on one connection"
            );
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        }
        let media_id = record::new_media_id();
        tracing::debug!(session = self.id, %media_ref, %media_id, size, "media upload started");
        let commands = upload_task::spawn(
            self.state.media.clone(),
            device.account.clone(),
            media_id.clone(),
        );
        self.media.uploads.insert(
            media_ref,
            Upload {
                media_id,
                kind,
                mime,
                size,
                filename,
                received: 0,
                commands,
            },
        );
    }

    /// A binary frame: the next chunk of an upload in progress.
    pub(super) fn on_binary(&mut self, bytes: Bytes, ctx: &mut ws::WebsocketContext<Self>) {
        self.state.metrics.frames_received_total.incr("binary");
        let chunk = match frame::decode(bytes) {
            Ok(chunk) if chunk.kind == ChunkKind::Upload => chunk,
            Ok(_) => return self.refuse_binary(ctx, "only upload chunks (kind 0x01) may be sent"),
            Err(err) => return self.refuse_binary(ctx, &err.to_string()),
        };
        let Some(upload) = self.media.uploads.get_mut(&chunk.id) else {
            let message = format!("no media upload {:?} in progress", chunk.id);
            return self.refuse_binary(ctx, &message);
        };
        let received = upload.received + chunk.payload.len() as u64;
        if received > upload.size {
            let announced = upload.size;
            // Dropping the upload closes its channel: the writer task aborts it.
            self.media.uploads.remove(&chunk.id);
            let message = format!(
                "upload {:?} sent more than its announced {announced} bytes; upload aborted",
                chunk.id
            );
            return self.send_error(ctx, None, ErrorCode::MediaTooLarge, message);
        }
        upload.received = received;
        if chunk.payload.is_empty() {
            return;
        }
        match upload
            .commands
            .try_send(UploadCommand::Chunk(chunk.payload))
        {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(command)) => {
                // The writer is behind: stop reading the socket until it takes this chunk.
                // Chunks arrive one message at a time, so at most one such wait is pending
                // and the upload's chunks stay in order.
                let commands = upload.commands.clone();
                ctx.wait(
                    async move {
                        let _ = commands.send(command).await;
                    }
                    .into_actor(self),
                );
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.media.uploads.remove(&chunk.id);
                let message = format!("upload {:?} failed in the store; upload aborted", chunk.id);
                self.send_error(ctx, None, ErrorCode::Internal, message);
            }
        }
    }

    fn refuse_binary(&self, ctx: &mut ws::WebsocketContext<Self>, message: &str) {
        metrics::incr(&self.state.metrics.protocol_errors_total);
        self.send_error(ctx, None, ErrorCode::Unsupported, message);
    }

    /// `media.upload.end`: keeps the object if the size and SHA-256 match, records it and
    /// answers `media.offer`; otherwise nothing is kept and the answer is an `error`.
    fn end_upload(
        &mut self,
        id: Option<u64>,
        end: MediaUploadEnd,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(device) = &self.device else { return };
        let Some(media_ref) = end.media_ref else {
            let message = "media.upload.end needs a media_ref";
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        };
        let Some(upload) = self.media.uploads.remove(&media_ref) else {
            let message = format!("no media upload {media_ref:?} in progress");
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        };
        // From here on every refusal drops `upload`, which aborts it: nothing is kept.
        if upload.received != upload.size {
            let message = format!(
                "size mismatch: upload {media_ref:?} announced {} bytes, received {}; upload aborted",
                upload.size, upload.received
            );
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        }
        let Some(sha256) = end.sha256 else {
            let message = "media.upload.end needs the sha256 of the bytes; upload aborted";
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        };
        let account = device.account.clone();
        let redis = self.state.redis.clone();
        let store = self.state.media.clone();
        let finish = async move {
            let (reply, outcome) = oneshot::channel();
            let command = UploadCommand::Finish {
                size: upload.size,
                sha256,
                reply,
            };
            let lost = || EndFailure::Failed("the upload's writer stopped".into());
            upload.commands.send(command).await.map_err(|_| lost())?;
            let sha256 = match outcome.await.map_err(|_| lost())? {
                UploadOutcome::Kept { sha256 } => sha256,
                UploadOutcome::Refused(FinishError::Sha256Mismatch { announced, actual }) => {
                    return Err(EndFailure::Refused(format!(
                        "sha256 mismatch: announced {announced}, the received bytes hash to \
                         {actual}; upload discarded"
                    )));
                }
                UploadOutcome::Refused(other) => {
                    return Err(EndFailure::Refused(other.to_string()))
                }
                UploadOutcome::Failed(err) => return Err(EndFailure::Failed(err)),
            };
            let kept = MediaRecord {
                media_id: upload.media_id,
                kind: upload.kind,
                mime: upload.mime,
                size: upload.size,
                filename: upload.filename,
                sha256,
                created_ms: now_ms(),
            };
            let saved = match redis.get().await {
                Ok(mut conn) => record::save(&mut conn, &account, &kept, &media_ref)
                    .await
                    .map_err(|err| err.to_string()),
                Err(err) => Err(err.to_string()),
            };
            if let Err(err) = saved {
                // Unrecorded bytes could never be pulled: remove them.
                if let Err(delete_err) = store.delete(&account, &kept.media_id).await {
                    tracing::warn!(%delete_err, media_id = %kept.media_id, "cannot delete unrecorded media");
                }
                return Err(EndFailure::Failed(format!(
                    "cannot record the media: {err}"
                )));
            }
            Ok(kept)
        };
        // `wait`: the upload's answer keeps its place among the device's requests.
        ctx.wait(
            finish
                .into_actor(self)
                .map(move |result, act, ctx| match result {
                    Ok(kept) => {
                        tracing::debug!(session = act.id, media_id = %kept.media_id, size = kept.size, "media stored");
                        let offer = ServerBody::MediaOffer(kept.to_media_ref());
                        act.send(ctx, ServerFrame::new(offer).with_id(id));
                    }
                    Err(EndFailure::Refused(message)) => {
                        act.send_error(ctx, id, ErrorCode::Unsupported, message);
                    }
                    Err(EndFailure::Failed(err)) => {
                        tracing::warn!(%err, session = act.id, "media upload failed");
                        let message = "the media could not be stored; upload it again";
                        act.send_error(ctx, id, ErrorCode::Internal, message);
                    }
                }),
        );
    }

    /// The connection is going away: every upload in progress is aborted. Dropping their
    /// channels does it: each writer task, which lives on the arbiter, not in the actor,
    /// sees its channel close and aborts its multipart upload.
    pub(super) fn abort_uploads(&mut self) {
        if self.media.uploads.is_empty() {
            return;
        }
        for (media_ref, upload) in self.media.uploads.drain() {
            tracing::info!(
                session = self.id,
                %media_ref,
                media_id = %upload.media_id,
                received = upload.received,
                size = upload.size,
                "connection closed mid-upload; aborting the upload"
            );
        }
    }
}
