//! Device tokens over the API: create, list, revoke (revoking closes the device's live
//! sessions on every gateway).

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

fn token_error(err: TokenError) -> HttpResponse {
    match err {
        TokenError::InvalidAccount(_) => {
            error(StatusCode::BAD_REQUEST, "bad_request", err.to_string())
        }
        TokenError::Redis(err) => backend_error(err),
    }
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

pub async fn revoke(
    request: HttpRequest,
    token: web::Path<String>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    match tokens::revoke_and_disconnect(&mut conn, &token).await {
        Ok(Some(account)) => {
            HttpResponse::Ok().json(json!({ "revoked": true, "account": account }))
        }
        Ok(None) => error(StatusCode::NOT_FOUND, "not_found", "no such token"),
        Err(err) => token_error(err),
    }
}
