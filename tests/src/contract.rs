//! Validation of every server frame against the vendored wire contract
//! (`shared/spec/iris-hermes-wire-protocol.schema.json`): the envelope, then the payload
//! schema of the frame's `server_to_app` type. A type the contract does not list is invalid.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{json, Value};

/// The contract, as vendored in the shared crate.
const CONTRACT_TEXT: &str = include_str!("../../shared/spec/iris-hermes-wire-protocol.schema.json");

/// Compiled validators for server → app frames.
struct ServerContract {
    envelope: Validator,
    payloads: HashMap<String, Validator>,
}

fn compile(schema: &Value) -> Validator {
    jsonschema::validator_for(schema)
        .unwrap_or_else(|err| panic!("the contract yields a valid schema: {err}\n{schema:#}"))
}

/// The payload schema of one frame type: its properties as an object schema, or the
/// payload's own `$ref`, with the contract's `definitions` attached.
fn payload_schema(payload: &Value, definitions: &Value) -> Value {
    let mut schema = if payload.get("$ref").is_some() {
        payload.clone()
    } else {
        json!({ "type": "object", "properties": payload })
    };
    schema["definitions"] = definitions.clone();
    schema
}

fn server_contract() -> &'static ServerContract {
    static CONTRACT: OnceLock<ServerContract> = OnceLock::new();
    CONTRACT.get_or_init(|| {
        let contract: Value =
            serde_json::from_str(CONTRACT_TEXT).expect("the vendored contract is valid JSON");
        let envelope = compile(&json!({
            "type": "object",
            "required": ["v", "type"],
            "properties": contract["envelope"]["properties"],
        }));
        let types = contract["frame_types"]["server_to_app"]
            .as_object()
            .expect("the contract lists frame_types.server_to_app");
        let payloads = types
            .iter()
            .map(|(name, spec)| {
                let schema = payload_schema(&spec["payload"], &contract["definitions"]);
                (name.clone(), compile(&schema))
            })
            .collect();
        ServerContract { envelope, payloads }
    })
}

fn errors_of(validator: &Validator, instance: &Value, part: &str) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|error| format!("{part}: {error} (at {})", error.instance_path))
        .collect()
}

/// Checks one frame the server sent; `Err` lists every violation.
pub fn check_server_frame(frame: &Value) -> Result<(), Vec<String>> {
    let contract = server_contract();
    let mut errors = errors_of(&contract.envelope, frame, "envelope");
    if let Some(type_name) = frame.get("type").and_then(Value::as_str) {
        match contract.payloads.get(type_name) {
            Some(validator) => {
                let payload = frame.get("payload").cloned().unwrap_or_else(|| json!({}));
                errors.extend(errors_of(validator, &payload, "payload"));
            }
            None => errors.push(format!(
                "type {type_name:?} is not a server_to_app type of the contract"
            )),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
