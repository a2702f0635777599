//! The server API's admin key check.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

use iris_shared::redact::Secret;

use super::error;
use crate::state::GatewayState;

/// `None` when the request carries the configured admin key, else the answer to send.
pub fn refusal(request: &HttpRequest, state: &GatewayState) -> Option<HttpResponse> {
    let Some(expected) = state.admin_key.as_ref().map(Secret::expose) else {
        return Some(error(
            StatusCode::NOT_FOUND,
            "api_disabled",
            "the server API is off: set IRIS_ADMIN_KEY on the gateways",
        ));
    };
    let presented = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    // Comparing digests keeps the comparison's time independent of where the keys differ.
    if Sha256::digest(presented.as_bytes()) == Sha256::digest(expected.as_bytes()) {
        None
    } else {
        Some(error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "wrong or missing admin key",
        ))
    }
}
