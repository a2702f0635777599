//! Serving `search {query, scope, chat_id, thread_id}` from the account's search index:
//! any gateway answers, no worker is involved.

use actix_web_actors::ws;

use iris_shared::protocol::{
    AppBody, AppFrame, ErrorCode, SearchResults, SearchScope, ServerBody, ServerFrame,
};
use iris_shared::search;

use super::Session;

/// Most hits one search returns.
const SEARCH_LIMIT: usize = 50;

impl Session {
    /// Answers a `search` request with `search.results` (newest first) or an error.
    pub(super) fn serve_search(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        let id = frame.id;
        let AppBody::Search(request) = &frame.body else {
            return;
        };
        let query = request.query.clone().unwrap_or_default();
        if query.trim().is_empty() {
            return self.send_error(ctx, id, ErrorCode::Unsupported, "search needs a query");
        }
        let scope = request.scope.unwrap_or(SearchScope::All);
        let chat_filter = match scope {
            SearchScope::All => None,
            SearchScope::Chat => {
                let scoped = AppFrame {
                    chat_id: request.chat_id.clone().or(frame.chat_id.clone()),
                    thread_id: request.thread_id.clone().or(frame.thread_id.clone()),
                    ..frame.clone()
                };
                match self.resolve_chat(&scoped) {
                    Ok(chat_id) => Some(chat_id),
                    Err(message) => return self.send_error(ctx, id, ErrorCode::NotFound, message),
                }
            }
        };
        let Some(device) = &self.device else { return };
        let threads = device.chats.clone();
        let (redis, account) = (self.state.redis.clone(), device.account.clone());
        let run = {
            let query = query.clone();
            async move {
                let mut conn = redis.get().await.map_err(|e| e.to_string())?;
                search::search(
                    &mut conn,
                    &account,
                    &query,
                    chat_filter.as_deref(),
                    SEARCH_LIMIT,
                )
                .await
                .map_err(|e| e.to_string())
            }
        };
        self.serve_in_order(ctx, run, move |result, act, ctx| match result {
            Ok(mut hits) => {
                // Thread messages are indexed under the thread; hits show them the way
                // frames do: the channel as `chat_id`, the thread as `thread_id`.
                for hit in &mut hits {
                    let parent = hit
                        .chat_id
                        .as_ref()
                        .and_then(|chat| threads.get(chat))
                        .cloned()
                        .flatten();
                    if let Some(parent) = parent {
                        hit.thread_id = hit.chat_id.replace(parent);
                    }
                }
                let results = SearchResults {
                    query: Some(query),
                    scope: Some(scope),
                    hits: Some(hits),
                };
                act.send(
                    ctx,
                    ServerFrame::new(ServerBody::SearchResults(results)).with_id(id),
                );
            }
            Err(err) => {
                tracing::warn!(%err, "search failed");
                act.send_error(
                    ctx,
                    id,
                    ErrorCode::Internal,
                    "search is not available; retry",
                );
            }
        });
    }
}
