//! The middleware every request passes first: it marks its connection as having produced a
//! request (see `connection_watch`), then refuses a header block over
//! `IRIS_MAX_HEADER_BYTES` with 431 and a path that tries to traverse with 404, closing the
//! connection after either.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web;

use super::connection_watch::ConnectionWatch;
use super::path::is_traversal;
use super::reason::Reason;
use crate::state::GatewayState;

/// Screens one request before routing.
pub async fn screen(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if let Some(watch) = req.conn_data::<ConnectionWatch>() {
        watch.mark_served();
    }
    let Some(state) = req.app_data::<web::Data<GatewayState>>().cloned() else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    };
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    let refused = if header_bytes > state.limits.max_header_bytes {
        Some(Reason::HeaderTooLarge.respond(
            &state.metrics,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request header fields too large",
        ))
    } else if is_traversal(req.uri().path()) {
        Some(Reason::PathTraversal.respond(&state.metrics, StatusCode::NOT_FOUND, "not found"))
    } else {
        None
    };
    match refused {
        Some(response) => Ok(req.into_response(response)),
        None => next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body),
    }
}
