//! An account's devices over the API: what each paired as, when it was last seen, whether
//! it is connected now and through which gateway node.

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::{json, Value};

use iris_shared::devices;

use super::{authorized_connection, backend_error};
use crate::state::GatewayState;

pub async fn list(
    request: HttpRequest,
    account: web::Path<String>,
    state: web::Data<GatewayState>,
) -> HttpResponse {
    let mut conn = match authorized_connection(&request, &state).await {
        Ok(conn) => conn,
        Err(answer) => return *answer,
    };
    let stored = match devices::list(&mut conn, &account).await {
        Ok(stored) => stored,
        Err(err) => return backend_error(err),
    };
    // Listed by device id, each record with its id beside its fields.
    let devices: Vec<Value> = stored
        .into_iter()
        .map(|(device_id, record)| {
            let mut device = serde_json::to_value(record).unwrap_or_else(|_| json!({}));
            device["device_id"] = json!(device_id);
            device
        })
        .collect();
    HttpResponse::Ok().json(json!({ "account": *account, "devices": devices }))
}
