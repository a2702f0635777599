//! An account's devices over the API: what each paired as, when it was last seen, whether
//! it is connected now and through which gateway node.

use std::collections::HashMap;

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::{json, Value};

use iris_shared::keys::AccountKeys;

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
    let stored: Result<HashMap<String, String>, _> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(&account).devices())
        .query_async(&mut conn)
        .await;
    let stored = match stored {
        Ok(stored) => stored,
        Err(err) => return backend_error(err),
    };
    let mut devices: Vec<Value> = stored
        .into_iter()
        .map(|(device_id, json)| {
            let mut device: Value = serde_json::from_str(&json).unwrap_or_else(|_| json!({}));
            device["device_id"] = json!(device_id);
            device
        })
        .collect();
    devices.sort_by(|a, b| a["device_id"].as_str().cmp(&b["device_id"].as_str()));
    HttpResponse::Ok().json(json!({ "account": *account, "devices": devices }))
}
