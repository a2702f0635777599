//! The server API: HTTP routes under `/api/v1` for other systems (cron jobs, admin tools)
//! to publish into an account's chats, manage device tokens and see devices. Every route
//! needs `Authorization: Bearer <IRIS_ADMIN_KEY>`; without a configured key the API is off.
//! docs/server-api.md describes each route with curl examples.

mod auth;
mod devices;
mod publish;
mod tokens;

use actix_web::error::{InternalError, JsonPayloadError};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

/// Largest JSON body a route reads.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// Registers the API routes.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .app_data(
                web::JsonConfig::default()
                    .limit(MAX_BODY_BYTES)
                    .error_handler(refused_body),
            )
            .route(
                "/accounts/{account}/messages",
                web::post().to(publish::message),
            )
            .route(
                "/accounts/{account}/notifications",
                web::post().to(publish::notification),
            )
            .route("/accounts/{account}/tokens", web::post().to(tokens::create))
            .route("/accounts/{account}/tokens", web::get().to(tokens::list))
            .route(
                "/accounts/{account}/tokens/{id}",
                web::delete().to(tokens::revoke_by_id),
            )
            .route("/tokens/revoke", web::post().to(tokens::revoke_token))
            .route("/accounts/{account}/devices", web::get().to(devices::list)),
    );
}

/// A body the JSON extractor refuses (not JSON, a missing or mistyped field, no JSON
/// content type, too large) is answered like every other error, not in actix's plain text.
fn refused_body(err: JsonPayloadError, _request: &HttpRequest) -> actix_web::Error {
    let message = format!("request body: {err}");
    let response = match &err {
        JsonPayloadError::OverflowKnownLength { .. } | JsonPayloadError::Overflow { .. } => {
            error(StatusCode::PAYLOAD_TOO_LARGE, "too_large", message)
        }
        _ => error(StatusCode::BAD_REQUEST, "bad_request", message),
    };
    InternalError::from_response(err, response).into()
}

/// A JSON error answer: `{"error": {"code": ..., "message": ...}}`.
fn error(
    status: actix_web::http::StatusCode,
    code: &str,
    message: impl Into<String>,
) -> HttpResponse {
    HttpResponse::build(status)
        .json(json!({ "error": { "code": code, "message": message.into() } }))
}

/// A Redis connection for an authorized request, or the answer to send instead (refused
/// key, or Redis unreachable).
async fn authorized_connection(
    request: &actix_web::HttpRequest,
    state: &crate::state::GatewayState,
) -> Result<iris_shared::redis_conn::Connection, Box<HttpResponse>> {
    if let Some(refused) = auth::refusal(request, state) {
        return Err(Box::new(refused));
    }
    state
        .redis
        .get()
        .await
        .map_err(|err| Box::new(backend_error(err)))
}

/// The answer when Redis fails.
fn backend_error(err: impl std::fmt::Display) -> HttpResponse {
    tracing::warn!(%err, "server API: Redis failed");
    error(
        actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "the store is not reachable; retry",
    )
}
