//! Device tokens over the API: create, list, revoke by id or by the token in a body
//! (revoking closes the device's live sessions on every gateway). No route carries a token
//! in its path, so none lands in a proxy's or an access log.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use iris_shared::tokens::{self, TokenError};

use super::{authorized_connection, backend_error, error};
use crate::state::GatewayState;

/// Body of `POST /accounts/{account}/tokens`.
#[derive(Debug, Deserialize, Default)]
pub struct CreateBody {
    /// Label shown in listings.
    name: Option<String>,
}

/// Body of `POST /tokens/revoke`.
#[derive(Deserialize)]
pub struct RevokeBody {
    /// The token, as created.
    token: String,
}

fn token_error(err: TokenError) -> HttpResponse {
    match err {
        TokenError::InvalidAccount(_) | TokenError::MalformedId(_) => {
            error(StatusCode::BAD_REQUEST, "bad_request", err.to_string())
        }
        TokenError::AmbiguousId { .. } => error(StatusCode::CONFLICT, "ambiguous", err.to_string()),
        TokenError::Redis(err) => backend_error(err),
    }
}

/// The answer to a revocation that took the token with id `id` of `account`.
fn revoked(account: &str, id: &str) -> HttpResponse {
    HttpResponse::Ok().json(json!({ "revoked": true, "account": account, "id": id }))
}

pub async fn create(
    request: HttpRequest,
    account: web::Path<String>,
    body: Option<web::Json<CreateBody>>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let name = body.and_then(|b| b.into_inner().name).unwrap_or_default();
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    match tokens::create(&mut conn, &account, &name).await {
        Ok(token) => {
            let id = tokens::id_of(&tokens::digest(&token)).to_owned();
            HttpResponse::Created().json(json!({ "token": token, "id": id, "account": *account }))
        }
        Err(err) => token_error(err),
    }
}

pub async fn list(
    request: HttpRequest,
    account: web::Path<String>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    match tokens::list(&mut conn, &account).await {
        Ok(listed) => HttpResponse::Ok().json(json!({
            "tokens": listed
                .iter()
                .map(|t| json!({ "id": t.id, "name": t.name, "created_ms": t.created_ms }))
                .collect::<Vec<_>>()
        })),
        Err(err) => token_error(err),
    }
}

/// `DELETE /accounts/{account}/tokens/{id}`.
pub async fn revoke_by_id(
    request: HttpRequest,
    path: web::Path<(String, String)>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let (account, id) = path.into_inner();
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    match tokens::revoke_by_id_and_disconnect(&mut conn, &account, &id).await {
        Ok(true) => revoked(&account, &id.to_ascii_lowercase()),
        Ok(false) => error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no token with id {id} in account {account}"),
        ),
        Err(err) => token_error(err),
    }
}

/// `POST /tokens/revoke` `{"token"}`: for a caller who holds the token, not its id.
pub async fn revoke_token(
    request: HttpRequest,
    body: web::Json<RevokeBody>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let token = body.into_inner().token;
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    if !tokens::is_well_formed(&token) {
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "not a device token (iris_ and 48 hex digits)",
        );
    }
    match tokens::revoke_and_disconnect(&mut conn, &token).await {
        Ok(Some(account)) => revoked(&account, tokens::id_of(&tokens::digest(&token))),
        Ok(None) => error(StatusCode::NOT_FOUND, "not_found", "no such token"),
        Err(err) => token_error(err),
    }
}
