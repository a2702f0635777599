//! Serving `history {before_message_id, limit}` straight from Redis: any gateway answers,
//! no worker is involved.

use actix_web_actors::ws;

use iris_shared::history::{self, HistoryError};
use iris_shared::protocol::{AppBody, AppFrame, ErrorCode, History, ServerBody, ServerFrame};

use super::Session;

/// Page size when the request names none.
const DEFAULT_PAGE: usize = 50;

impl Session {
    /// Answers a `history` request with one page (oldest → newest) or an error.
    pub(super) fn serve_history(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        let id = frame.id;
        let AppBody::History(request) = &frame.body else {
            return;
        };
        let chat_id = match self.resolve_chat(&frame) {
            Ok(chat_id) => chat_id,
            Err(message) => return self.send_error(ctx, id, ErrorCode::NotFound, message),
        };
        let Some(device) = &self.device else { return };
        let thread_parent = device.chats.get(&chat_id).cloned().flatten();
        let limit = request.limit.map_or(DEFAULT_PAGE, |limit| limit as usize);
        let before = request.before_message_id.clone();
        let (redis, account) = (self.state.redis.clone(), device.account.clone());
        let read = {
            let chat_id = chat_id.clone();
            async move {
                let mut conn = redis
                    .get()
                    .await
                    .map_err(|e| HistoryError::Redis(e_to_redis(e)))?;
                history::page(&mut conn, &account, &chat_id, before.as_deref(), limit).await
            }
        };
        self.serve_in_order(ctx, read, move |result, act, ctx| match result {
            Ok(page) => {
                let oldest = page.messages.first().and_then(|m| m.message_id.clone());
                let body = ServerBody::History(History {
                    messages: Some(page.messages),
                    has_more: Some(page.has_more),
                    oldest_message_id: oldest,
                });
                let frame = match thread_parent {
                    Some(parent) => ServerFrame::new(body)
                        .with_chat(parent)
                        .with_thread(chat_id),
                    None => ServerFrame::new(body).with_chat(chat_id),
                };
                act.send(ctx, frame.with_id(id));
            }
            Err(HistoryError::UnknownMessage(message_id)) => {
                let message = format!("message {message_id:?} is not in this chat");
                act.send_error(ctx, id, ErrorCode::NotFound, message);
            }
            Err(HistoryError::Redis(err)) => {
                tracing::warn!(%err, "history read failed");
                act.send_error(
                    ctx,
                    id,
                    ErrorCode::Internal,
                    "history is not available; retry",
                );
            }
        });
    }
}

fn e_to_redis(err: iris_shared::redis_conn::PoolError) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::other(err.to_string()))
}
