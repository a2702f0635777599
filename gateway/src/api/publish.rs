//! Publishing into an account's chat: a finished message (e.g. a cron job's result) or a
//! notification. The gateway writes it at once (it depends on nothing the chat's worker
//! knows), like the user's own message of a `message.send`: once, outboxed, stored in
//! history, delivered, pushed and indexed, without waiting for a worker or a running turn.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use iris_shared::channels;
use iris_shared::clock::now_ms;
use iris_shared::inbound::ServerRequest;
use iris_shared::keys::is_valid_account;
use iris_shared::partition::partition_of;
use iris_shared::protocol::{NotificationKind, Role, DEFAULT_CHAT_ID};
use iris_shared::publish::{publish, ChatScope, PublishError};
use iris_shared::server_publish::{self, Origin};
use iris_shared::telemetry::propagation;
use tracing::Instrument;

use super::{auth, backend_error, error};
use crate::metrics;
use crate::state::GatewayState;

/// Body of `POST /accounts/{account}/messages`.
#[derive(Debug, Deserialize)]
pub struct MessageBody {
    /// Target chat (default `android:default`).
    chat_id: Option<String>,
    /// `cron` (default), `assistant` or `system`.
    role: Option<Role>,
    /// The message.
    text: String,
    /// Idempotency key: the same key publishes once.
    key: Option<String>,
}

/// Body of `POST /accounts/{account}/notifications`.
#[derive(Debug, Deserialize)]
pub struct NotificationBody {
    /// Chat the notification is about (default `android:default`).
    chat_id: Option<String>,
    /// Seed kind (`generic` by default; `cron`, ...).
    kind: Option<NotificationKind>,
    /// Headline.
    title: String,
    /// Body text.
    body: Option<String>,
}

pub async fn message(
    request: HttpRequest,
    account: web::Path<String>,
    body: web::Json<MessageBody>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    if let Some(refused) = auth::refusal(&request, &state) {
        return refused;
    }
    let body = body.into_inner();
    let role = body.role.unwrap_or(Role::Cron);
    if role == Role::User {
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "role user is for devices",
        );
    }
    if body.text.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "bad_request", "text is empty");
    }
    let server_request = ServerRequest::Publish {
        role,
        text: body.text,
        key: body.key,
    };
    traced_forward(&request, &state, &account, body.chat_id, server_request).await
}

pub async fn notification(
    request: HttpRequest,
    account: web::Path<String>,
    body: web::Json<NotificationBody>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    if let Some(refused) = auth::refusal(&request, &state) {
        return refused;
    }
    let body = body.into_inner();
    let server_request = ServerRequest::Notify {
        kind: body.kind.unwrap_or(NotificationKind::Generic),
        title: body.title,
        body: body.body.unwrap_or_default(),
    };
    traced_forward(&request, &state, &account, body.chat_id, server_request).await
}

/// [`forward`] inside a server span of its own, which continues the caller's `traceparent`
/// header when it sends one: the worker's handling and the frames it writes join that trace.
async fn traced_forward(
    request: &HttpRequest,
    state: &GatewayState,
    account: &str,
    chat_id: Option<String>,
    server_request: ServerRequest,
) -> HttpResponse {
    let span = iris_shared::traced_span!(
        "iris.api",
        otel.kind = "server",
        request = server_request.kind_name(),
        account = %account,
    );
    let caller = request
        .headers()
        .get(propagation::TRACEPARENT)
        .and_then(|value| value.to_str().ok());
    propagation::continue_trace(&span, caller);
    forward(state, account, chat_id, server_request)
        .instrument(span)
        .await
}

/// Checks the account and chat, then writes the request's frame: outbox, history, delivery
/// to every device, push and search, once (an idempotency key makes a retry a no-op).
async fn forward(
    state: &GatewayState,
    account: &str,
    chat_id: Option<String>,
    server_request: ServerRequest,
) -> HttpResponse {
    if !is_valid_account(account) {
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "invalid account name",
        );
    }
    let chat_id = chat_id.unwrap_or_else(|| DEFAULT_CHAT_ID.to_owned());
    let mut conn = match state.redis.get().await {
        Ok(conn) => conn,
        Err(err) => return backend_error(err),
    };
    // The default chat always exists; another one is looked up (a thread also names its
    // parent, under which its frames go).
    let thread_parent = if chat_id == DEFAULT_CHAT_ID {
        None
    } else {
        match channels::get(&mut conn, account, &chat_id).await {
            Ok(Some(channel)) => channel.parent_chat_id,
            Ok(None) => {
                return error(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    format!("account {account:?} has no chat {chat_id:?}"),
                )
            }
            Err(err) => return backend_error(err),
        }
    };
    let scope = ChatScope {
        account: account.to_owned(),
        chat_id: chat_id.clone(),
        fence: None,
        thread_parent,
    };
    let partition = partition_of(account, &chat_id, state.partitions);
    let origin = Origin::of(&server_request, partition, server_publish::unique_origin());
    let mut outgoing = server_publish::outgoing(server_request, &origin, now_ms());
    if origin.is_keyed() {
        outgoing = outgoing.once_as(origin.effect());
    }
    match publish(&mut conn, &scope, outgoing).await {
        Ok(written) => {
            if written.appended {
                metrics::incr(&state.metrics.outbox_appends_total);
            }
            HttpResponse::Accepted().json(json!({ "accepted": true, "chat_id": chat_id }))
        }
        Err(PublishError::Redis(err)) => backend_error(err),
        // Unfenced writes are never fenced off.
        Err(PublishError::Fenced) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the chat refused the write; retry",
        ),
    }
}
