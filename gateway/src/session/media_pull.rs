//! `media.pull {media_id}`: streams a stored item of the device's own account as binary
//! pull chunks (kind 0x02, 64 KiB each), then `media.pull.end {ok}` answering the request.
//!
//! Memory stays bounded whatever the item's size: the object is read one chunk at a time
//! by a future spawned on the actor's context, and the next read starts only after the
//! previous chunk was queued and the future yielded. Actix polls the actor (and so this
//! future) only when the HTTP writer has room for more body, so a slow reader slows the
//! reads down instead of piling chunks up in the gateway.

use actix::prelude::*;
use actix_web_actors::ws;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};

use iris_shared::media::frame::{self, ChunkKind};
use iris_shared::media::record;
use iris_shared::media::store::MediaStoreError;
use iris_shared::protocol::{ErrorCode, MediaPull, MediaPullEnd, ServerBody, ServerFrame};

use super::Session;

/// Pulls one connection may have in progress at once.
const MAX_PULLS_PER_CONNECTION: usize = 4;

/// A pull in progress.
struct Pull {
    /// The `media.pull` request's id, answered by `media.pull.end`.
    request_id: Option<u64>,
    media_id: String,
    /// The recorded size; anything else read means the object is damaged.
    size: u64,
    /// Bytes sent so far.
    sent: u64,
    chunks: BoxStream<'static, Result<Bytes, MediaStoreError>>,
}

/// Why a pull does not start.
enum PullRefusal {
    /// No such media in the device's account.
    NotFound,
    /// Redis failed.
    Backend(String),
}

impl Session {
    /// Looks the item up in the device's own account and starts streaming it.
    pub(super) fn start_pull(
        &mut self,
        id: Option<u64>,
        pull: MediaPull,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(device) = &self.device else { return };
        let media_id = pull.media_id.unwrap_or_default();
        if !record::is_media_id(&media_id) {
            let message = format!("no media {media_id:?}");
            return self.send_error(ctx, id, ErrorCode::NotFound, message);
        }
        if self.media.pulls.contains(&media_id) {
            let message = format!("media {media_id} is already being pulled on this connection");
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        }
        if self.media.pulls.len() >= MAX_PULLS_PER_CONNECTION {
            let message =
                format!("at most {MAX_PULLS_PER_CONNECTION} pulls may run on one connection");
            return self.send_error(ctx, id, ErrorCode::Unsupported, message);
        }
        self.media.pulls.insert(media_id.clone());
        let account = device.account.clone();
        let redis = self.state.redis.clone();
        let store = self.state.media.clone();
        let lookup_id = media_id.clone();
        // The key carries the device's own account tag: another account's item is simply
        // not found.
        let open = async move {
            let mut conn = redis
                .get()
                .await
                .map_err(|err| PullRefusal::Backend(err.to_string()))?;
            let found = record::load(&mut conn, &account, &lookup_id)
                .await
                .map_err(|err| PullRefusal::Backend(err.to_string()))?
                .ok_or(PullRefusal::NotFound)?;
            drop(conn);
            Ok((found.size, store.read(&account, &lookup_id).await))
        };
        // `wait` for the lookup only: the answer to a missing item keeps its place among
        // the device's requests, while the bytes then flow alongside later requests.
        ctx.wait(open.into_actor(self).map(move |result, act, ctx| {
            let (size, opened) = match result {
                Ok(found) => found,
                Err(refusal) => {
                    act.media.pulls.remove(&media_id);
                    return match refusal {
                        PullRefusal::NotFound => {
                            let message = format!("no media {media_id}");
                            act.send_error(ctx, id, ErrorCode::NotFound, message)
                        }
                        PullRefusal::Backend(err) => {
                            tracing::warn!(%err, "media lookup failed");
                            let message = "media lookup failed; retry";
                            act.send_error(ctx, id, ErrorCode::Internal, message)
                        }
                    };
                }
            };
            match opened {
                Ok(chunks) => {
                    let pull = Pull {
                        request_id: id,
                        media_id,
                        size,
                        sent: 0,
                        chunks,
                    };
                    act.pull_next(pull, ctx);
                }
                Err(err) => {
                    tracing::warn!(%err, %media_id, "recorded media cannot be read from the store");
                    act.media.pulls.remove(&media_id);
                    act.end_pull(ctx, id, false);
                }
            }
        }));
    }

    /// Reads the next chunk and sends it, then schedules the read after it.
    fn pull_next(&mut self, mut pull: Pull, ctx: &mut ws::WebsocketContext<Self>) {
        let read = async move {
            let next = pull.chunks.next().await;
            // Give the actor back to the HTTP writer before this chunk is queued, so a
            // store that answers at once cannot queue chunk after chunk in one poll.
            tokio::task::yield_now().await;
            (pull, next)
        };
        ctx.spawn(
            read.into_actor(self)
                .map(|(mut pull, next), act, ctx| match next {
                    Some(Ok(bytes)) => {
                        pull.sent += bytes.len() as u64;
                        if pull.sent > pull.size {
                            tracing::warn!(media_id = %pull.media_id, size = pull.size, "stored media is longer than recorded");
                            return act.finish_pull(pull, false, ctx);
                        }
                        match frame::encode(ChunkKind::Pull, &pull.media_id, &bytes) {
                            Ok(chunk) => ctx.binary(chunk),
                            Err(err) => {
                                tracing::warn!(%err, "cannot frame a pull chunk");
                                return act.finish_pull(pull, false, ctx);
                            }
                        }
                        act.pull_next(pull, ctx);
                    }
                    Some(Err(err)) => {
                        tracing::warn!(%err, media_id = %pull.media_id, "media read failed mid-pull");
                        act.finish_pull(pull, false, ctx);
                    }
                    None => {
                        let complete = pull.sent == pull.size;
                        if !complete {
                            tracing::warn!(media_id = %pull.media_id, size = pull.size, sent = pull.sent, "stored media is shorter than recorded");
                        }
                        act.finish_pull(pull, complete, ctx);
                    }
                }),
        );
    }

    fn finish_pull(&mut self, pull: Pull, ok: bool, ctx: &mut ws::WebsocketContext<Self>) {
        self.media.pulls.remove(&pull.media_id);
        self.end_pull(ctx, pull.request_id, ok);
    }

    fn end_pull(&self, ctx: &mut ws::WebsocketContext<Self>, request_id: Option<u64>, ok: bool) {
        let end = ServerBody::MediaPullEnd(MediaPullEnd { ok: Some(ok) });
        self.send(ctx, ServerFrame::new(end).with_id(request_id));
    }
}
