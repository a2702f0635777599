//! Contract tests: the typed wire protocol checked against the vendored JSON contract in `spec/`.

use std::collections::BTreeSet;

use iris_shared::protocol::*;
use jsonschema::Validator;
use serde_json::{json, Map, Value};

const CONTRACT_TEXT: &str = include_str!("../spec/iris-hermes-wire-protocol.schema.json");
const SERVER_TO_APP: &str = "server_to_app";
const APP_TO_SERVER: &str = "app_to_server";

// ---------------------------------------------------------------------------------------------
// Reading the contract
// ---------------------------------------------------------------------------------------------

fn contract() -> Value {
    serde_json::from_str(CONTRACT_TEXT).expect("the vendored contract is valid JSON")
}

fn frame_types(direction: &str) -> Map<String, Value> {
    contract()["frame_types"][direction]
        .as_object()
        .unwrap_or_else(|| panic!("contract has frame_types.{direction}"))
        .clone()
}

fn contract_type_names(direction: &str) -> BTreeSet<String> {
    frame_types(direction).keys().cloned().collect()
}

fn compile(schema: &Value) -> Validator {
    jsonschema::validator_for(schema).unwrap_or_else(|error| {
        panic!("schema derived from the contract compiles: {error}\n{schema}")
    })
}

/// The envelope as a schema: the contract's envelope properties, with `payload` always required.
fn envelope_validator() -> Validator {
    let contract = contract();
    compile(&json!({
        "type": "object",
        "required": ["v", "type", "payload"],
        "properties": contract["envelope"]["properties"],
        "definitions": contract["definitions"],
    }))
}

/// The payload schema of one frame type exactly as the contract states it.
fn payload_schema(direction: &str, type_name: &str) -> Value {
    let contract = contract();
    let payload = &contract["frame_types"][direction][type_name]["payload"];
    let mut schema = if payload.get("$ref").is_some() {
        payload.clone()
    } else {
        json!({ "type": "object", "properties": payload })
    };
    schema["definitions"] = contract["definitions"].clone();
    schema
}

/// The payload schema with every object closed (no unknown fields) and every listed field required,
/// so an example must fill exactly the contract's fields, with no misspelt extras.
fn strict_payload_schema(direction: &str, type_name: &str) -> Value {
    let mut schema = payload_schema(direction, type_name);
    if (direction, type_name) == (SERVER_TO_APP, "sync.done") {
        // Documented extension of the contract: the device's cursor could not be served.
        schema["properties"]["reset"] = json!({ "type": "boolean" });
    }
    if (direction, type_name) == (SERVER_TO_APP, "agent.busy") {
        // Documented extensions: the message answered, the queue, no worker running.
        schema["properties"]["message_id"] = json!({ "type": "string" });
        schema["properties"]["queued"] = json!({ "type": "array", "items": { "type": "string" } });
        schema["properties"]["unavailable"] = json!({ "type": "boolean" });
    }
    if (direction, type_name) == (APP_TO_SERVER, "hello") {
        // Documented extension: the app resumes from a cursor (a `sync` follows).
        schema["properties"]["resume"] = json!({ "type": "boolean" });
    }
    if (direction, type_name) == (SERVER_TO_APP, "message.stop") {
        // Documented extension of the contract: the turn was cut off by a stopped worker.
        schema["properties"]["interrupted"] = json!({ "type": "boolean" });
    }
    close_objects(&mut schema);
    schema
}

fn close_objects(schema: &mut Value) {
    let Some(schema) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        properties.values_mut().for_each(close_objects);
        schema.insert("required".into(), Value::Array(names));
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(items) = schema.get_mut("items") {
        close_objects(items);
    }
    if let Some(Value::Object(definitions)) = schema.get_mut("definitions") {
        definitions.values_mut().for_each(close_objects);
    }
}

fn assert_valid(validator: &Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| format!("{} at {}", error, error.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} violates the contract: {errors:#?}\n{instance:#}"
    );
}

/// `reliability.never_dropped` read from the contract, with `x.*` entries meaning "prefix `x.`".
fn contract_says_never_dropped(type_name: &str) -> bool {
    contract()["reliability"]["never_dropped"]
        .as_array()
        .expect("contract has reliability.never_dropped")
        .iter()
        .map(|pattern| pattern.as_str().expect("patterns are strings"))
        .any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => type_name.starts_with(prefix),
            None => type_name == pattern,
        })
}

// ---------------------------------------------------------------------------------------------
// Examples: one server frame per type, every field filled
// ---------------------------------------------------------------------------------------------

fn text(value: &str) -> Option<String> {
    Some(value.to_owned())
}

fn example_channel() -> Channel {
    Channel {
        chat_id: text("android:chan_7"),
        name: text("Groceries"),
        kind: Some(ChannelKind::Thread),
        parent_chat_id: text("android:default"),
        is_default: Some(false),
        ..Default::default()
    }
}

fn example_media_ref() -> MediaRef {
    MediaRef {
        media_id: text("med_42"),
        kind: Some(MediaKind::Image),
        mime: text("image/png"),
        size: Some(48_213),
        filename: text("receipt.png"),
    }
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object literal").clone()
}

fn example_server_bodies() -> Vec<ServerBody> {
    vec![
        HelloAck {
            server_caps: Some(ServerCaps {
                streaming: Some(true),
                reasoning: Some(true),
                tools: Some(true),
                media: Some(true),
                search: Some(true),
                push: Some(PushKind::Ntfy),
                pickers: Some(true),
            }),
            sync_cursor: Some(1_042),
            channels: Some(vec![example_channel()]),
        }
        .into(),
        MessagePayload {
            message_id: text("msg_1"),
            role: Some(Role::Assistant),
            text: text("Here is the summary."),
            reasoning: text("The user wants a summary."),
            media: Some(vec![example_media_ref()]),
            reply_to: text("msg_0"),
            model: text("claude-sonnet"),
            tokens: Some(512),
            ts: Some(1_760_000_000_000),
        }
        .into(),
        MessageStart {
            message_id: text("msg_2"),
            role: Some(Role::Assistant),
        }
        .into(),
        MessageUpdate {
            message_id: text("msg_2"),
            text: text("Partial an"),
        }
        .into(),
        MessageStop {
            message_id: text("msg_2"),
            final_text: text("Partial answer, now complete."),
            reasoning: text("Thinking it over."),
            model: text("claude-sonnet"),
            tokens: Some(88),
            interrupted: Some(true),
        }
        .into(),
        Commentary {
            message_id: text("msg_3"),
            text: text("Looking that up."),
        }
        .into(),
        ToolStart {
            index: Some(0),
            name: text("web_search"),
            preview: text("searching for rust serde"),
            args: Some(object(json!({ "query": "rust serde", "limit": 5 }))),
        }
        .into(),
        ToolProgress {
            index: Some(0),
            name: text("web_search"),
            note: text("3 of 5 pages fetched"),
        }
        .into(),
        ToolEnd {
            index: Some(0),
            name: text("web_search"),
            ok: Some(true),
            duration: Some(1.25),
            output_preview: text("5 results"),
        }
        .into(),
        Typing { on: Some(true) }.into(),
        Notification {
            kind: Some(NotificationKind::Cron),
            title: text("Daily digest"),
            body: text("3 new items"),
            ts: Some(1_760_000_000_500),
            ..Default::default()
        }
        .into(),
        PickerModel {
            picker_id: text("pick_1"),
            current_model: text("claude-sonnet"),
            current_provider: text("anthropic"),
            providers: Some(vec![ModelProvider {
                id: text("anthropic"),
                label: text("Anthropic"),
                models: Some(vec![ModelOption {
                    id: text("claude-sonnet"),
                    label: text("Claude Sonnet"),
                }]),
            }]),
        }
        .into(),
        PickerChoice {
            picker_id: text("pick_2"),
            title: text("Reasoning effort"),
            choices: Some(vec![ChoiceOption {
                value: text("high"),
                label: text("High"),
                is_current: Some(true),
            }]),
        }
        .into(),
        PickerClarify {
            picker_id: text("pick_3"),
            question: text("Which account?"),
            choices: Some(vec![object(json!({ "value": "work", "label": "Work" }))]),
        }
        .into(),
        PickerApproval {
            picker_id: text("pick_4"),
            command: text("rm -rf build/"),
            description: text("Delete the build directory"),
        }
        .into(),
        PickerConfirm {
            picker_id: text("pick_5"),
            title: text("Reset session?"),
            message: text("The conversation context will be cleared."),
        }
        .into(),
        ChannelList {
            channels: Some(vec![example_channel()]),
        }
        .into(),
        ServerBody::ChannelCreated(example_channel()),
        ChannelRenamed {
            chat_id: text("android:chan_7"),
            name: text("Shopping"),
        }
        .into(),
        ChannelDeleted {
            chat_id: text("android:chan_7"),
        }
        .into(),
        History {
            messages: Some(vec![HistoryMessage {
                message_id: text("msg_1"),
                role: Some(Role::User),
                text: text("Summarize this."),
                reasoning: text("none"),
                model: text("claude-sonnet"),
                tokens: Some(12),
                ts: Some(1_759_999_999_000),
                ..Default::default()
            }]),
            has_more: Some(true),
            oldest_message_id: text("msg_1"),
        }
        .into(),
        CommandsCatalog {
            commands: Some(vec![CommandInfo {
                name: text("/model"),
                description: text("Switch the model"),
                args_hint: text("[name]"),
                category: text("session"),
            }]),
        }
        .into(),
        CommandsComplete {
            prefix: text("/mo"),
            matches: Some(vec![CommandMatch {
                name: text("/model"),
                description: text("Switch the model"),
                args_hint: text("[name]"),
            }]),
        }
        .into(),
        AgentBusy {
            reason: Some(BusyReason::WaitingInput),
            message_id: text("u3-1-0"),
            queued: Some(vec!["u3-2-0".to_owned()]),
            unavailable: Some(true),
        }
        .into(),
        AgentIdle {}.into(),
        SearchResults {
            query: text("receipt"),
            scope: Some(SearchScope::All),
            hits: Some(vec![SearchHit {
                message_id: text("msg_9"),
                chat_id: text("android:chan_7"),
                thread_id: text("android:chan_8"),
                role: Some(Role::User),
                snippet: text("...the receipt from..."),
                ts: Some(1_759_000_000_000),
            }]),
        }
        .into(),
        ServerBody::MediaOffer(example_media_ref()),
        Status {
            state: Some(StatusState::Degraded),
            session: Some(object(json!({ "model": "claude-sonnet", "uptime_s": 30 }))),
        }
        .into(),
        ErrorPayload::new(ErrorCode::NotFound, "no such message").into(),
        Pong {
            ts: Some(1_760_000_001_000),
        }
        .into(),
        SyncDone {
            cursor: Some(1_042),
            reset: Some(true),
        }
        .into(),
        MediaPullEnd { ok: Some(true) }.into(),
    ]
}

fn example_server_frames() -> Vec<ServerFrame> {
    example_server_bodies()
        .into_iter()
        .enumerate()
        .map(|(index, body)| {
            let index = u64::try_from(index).expect("few examples");
            ServerFrame::new(body)
                .with_id(Some(100 + index))
                .with_seq(7_000 + index)
                .with_chat("android:chan_7")
                .with_thread("android:chan_8")
        })
        .collect()
}

fn serialized(frame: &ServerFrame) -> Value {
    serde_json::from_str(&frame.to_json()).expect("to_json yields JSON")
}

// ---------------------------------------------------------------------------------------------
// (1) Every server frame type matches the contract
// ---------------------------------------------------------------------------------------------

#[test]
fn server_examples_cover_exactly_the_contract_server_types() {
    let covered: BTreeSet<String> = example_server_bodies()
        .iter()
        .map(|body| body.type_name().to_owned())
        .collect();
    assert_eq!(covered, contract_type_names(SERVER_TO_APP));
    assert_eq!(
        example_server_bodies().len(),
        covered.len(),
        "one example per type"
    );
}

#[test]
fn server_type_names_list_exactly_the_contract_server_types() {
    let listed: BTreeSet<String> = ServerBody::TYPE_NAMES
        .iter()
        .map(|name| name.to_string())
        .collect();
    assert_eq!(listed, contract_type_names(SERVER_TO_APP));
}

#[test]
fn every_server_frame_validates_against_the_contract_envelope_and_payload() {
    let envelope = envelope_validator();
    for frame in example_server_frames() {
        let type_name = frame.body.type_name();
        let wire = serialized(&frame);
        assert_eq!(
            wire["type"], type_name,
            "type_name() agrees with the serialized type"
        );
        assert_valid(&envelope, &wire, &format!("envelope of {type_name}"));
        let payload = compile(&payload_schema(SERVER_TO_APP, type_name));
        assert_valid(
            &payload,
            &wire["payload"],
            &format!("payload of {type_name}"),
        );
    }
}

#[test]
fn every_server_example_fills_exactly_the_contract_fields() {
    for frame in example_server_frames() {
        let type_name = frame.body.type_name();
        let strict = compile(&strict_payload_schema(SERVER_TO_APP, type_name));
        assert_valid(
            &strict,
            &serialized(&frame)["payload"],
            &format!("strict payload of {type_name}"),
        );
    }
}

#[test]
fn server_frame_serializes_flat_and_omits_absent_fields() {
    let idle = ServerFrame::new(AgentIdle {});
    assert_eq!(
        serialized(&idle),
        json!({ "v": 1, "type": "agent.idle", "payload": {} })
    );

    let start = ServerFrame::new(MessageStart {
        message_id: text("m1"),
        role: None,
    })
    .with_id(Some(5))
    .with_chat(DEFAULT_CHAT_ID);
    assert_eq!(
        serialized(&start),
        json!({
            "v": 1,
            "id": 5,
            "type": "message.start",
            "chat_id": "android:default",
            "payload": { "message_id": "m1" },
        })
    );
}

#[test]
fn sync_done_reset_is_serialized_only_when_set() {
    let plain = ServerFrame::new(SyncDone {
        cursor: Some(3),
        reset: None,
    });
    assert_eq!(serialized(&plain)["payload"], json!({ "cursor": 3 }));
    let reset = ServerFrame::new(SyncDone {
        cursor: Some(0),
        reset: Some(true),
    });
    assert_eq!(
        serialized(&reset)["payload"],
        json!({ "cursor": 0, "reset": true })
    );
}

// ---------------------------------------------------------------------------------------------
// (2) Every app frame type parses
// ---------------------------------------------------------------------------------------------

/// One handwritten frame per app type with every contract field, and the body it must parse into.
fn app_examples() -> Vec<(&'static str, AppBody)> {
    vec![
        (
            r#"{"v":1,"id":1,"type":"hello","payload":{"token":"tok","device_id":"dev-1","device_name":"Pixel 9","caps":{"min_protocol":1,"media":true,"push":"fcm"},"fcm_token":"fcm-abc","ntfy_topic":"iris-dev-1","resume":true}}"#,
            Hello {
                token: text("tok"),
                device_id: text("dev-1"),
                device_name: text("Pixel 9"),
                caps: Some(HelloCaps {
                    min_protocol: Some(1),
                    media: Some(true),
                    push: text("fcm"),
                }),
                fcm_token: text("fcm-abc"),
                ntfy_topic: text("iris-dev-1"),
                resume: Some(true),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":2,"type":"message.send","chat_id":"android:default","payload":{"text":"hi","reply_to":"msg_1","media_refs":["up_1","up_2"]}}"#,
            MessageSend {
                text: text("hi"),
                reply_to: text("msg_1"),
                media_refs: Some(vec!["up_1".into(), "up_2".into()]),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":3,"type":"media.upload.start","payload":{"media_ref":"up_1","kind":"voice","mime":"audio/ogg","size":2048,"filename":"note.ogg"}}"#,
            MediaUploadStart {
                media_ref: text("up_1"),
                kind: Some(MediaKind::Voice),
                mime: text("audio/ogg"),
                size: Some(2048),
                filename: text("note.ogg"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":4,"type":"media.upload.end","payload":{"media_ref":"up_1","sha256":"ab12"}}"#,
            MediaUploadEnd {
                media_ref: text("up_1"),
                sha256: text("ab12"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":5,"type":"media.pull","payload":{"media_id":"med_42"}}"#,
            MediaPull {
                media_id: text("med_42"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":6,"type":"picker.select","payload":{"picker_id":"pick_1","value":"claude-sonnet"}}"#,
            PickerSelect {
                picker_id: text("pick_1"),
                value: text("claude-sonnet"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":7,"type":"channel.create","payload":{"name":"Ideas","kind":"thread","parent_chat_id":"android:default"}}"#,
            ChannelCreate {
                name: text("Ideas"),
                kind: Some(NewChannelKind::Thread),
                parent_chat_id: text("android:default"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":8,"type":"channel.rename","chat_id":"android:chan_7","payload":{"name":"Shopping"}}"#,
            ChannelRename {
                name: text("Shopping"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":9,"type":"channel.set_default","chat_id":"android:chan_7","payload":{}}"#,
            ChannelSetDefault {}.into(),
        ),
        (
            r#"{"v":1,"id":10,"type":"channel.delete","chat_id":"android:chan_7","payload":{}}"#,
            ChannelDelete {}.into(),
        ),
        (
            r#"{"v":1,"id":11,"type":"search","payload":{"query":"receipt","scope":"chat","chat_id":"android:chan_7","thread_id":"android:chan_8"}}"#,
            SearchRequest {
                query: text("receipt"),
                scope: Some(SearchScope::Chat),
                chat_id: text("android:chan_7"),
                thread_id: text("android:chan_8"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":12,"type":"history","chat_id":"android:default","payload":{"before_message_id":"msg_9","limit":50}}"#,
            HistoryRequest {
                before_message_id: text("msg_9"),
                limit: Some(50),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":13,"type":"commands.catalog","payload":{}}"#,
            CommandsCatalogRequest {}.into(),
        ),
        (
            r#"{"v":1,"id":14,"type":"commands.complete","payload":{"prefix":"/mo"}}"#,
            CommandsCompleteRequest {
                prefix: text("/mo"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":15,"type":"agent.stop","chat_id":"android:default","payload":{}}"#,
            AgentStop {}.into(),
        ),
        (
            r#"{"v":1,"id":16,"type":"agent.steer","chat_id":"android:default","payload":{"text":"shorter please"}}"#,
            AgentSteer {
                text: text("shorter please"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":17,"type":"read.receipt","payload":{"chat_id":"android:default","message_id":"msg_9"}}"#,
            ReadReceipt {
                chat_id: text("android:default"),
                message_id: text("msg_9"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":18,"type":"sync","payload":{"cursor":1042}}"#,
            SyncRequest { cursor: Some(1042) }.into(),
        ),
        (
            r#"{"v":1,"id":19,"type":"fcm.register","payload":{"fcm_token":"fcm-new","ntfy_topic":"iris-dev-1"}}"#,
            FcmRegister {
                fcm_token: text("fcm-new"),
                ntfy_topic: text("iris-dev-1"),
            }
            .into(),
        ),
        (
            r#"{"v":1,"id":20,"type":"ping","payload":{"ts":1760000000000}}"#,
            Ping {
                ts: Some(1_760_000_000_000),
            }
            .into(),
        ),
    ]
}

fn parse_ok(text: &str) -> AppFrame {
    parse_app_frame(text).unwrap_or_else(|error| panic!("{text} parses: {error}"))
}

fn parse_err(text: &str) -> ProtocolError {
    match parse_app_frame(text) {
        Ok(frame) => panic!("{text} must be rejected, parsed as {frame:?}"),
        Err(error) => error,
    }
}

#[test]
fn app_examples_cover_exactly_the_contract_app_types() {
    let covered: BTreeSet<String> = app_examples()
        .iter()
        .map(|(_, body)| body.type_name().to_owned())
        .collect();
    assert_eq!(covered, contract_type_names(APP_TO_SERVER));
    assert_eq!(app_examples().len(), covered.len(), "one example per type");
    let listed: BTreeSet<String> = AppBody::TYPE_NAMES
        .iter()
        .map(|name| name.to_string())
        .collect();
    assert_eq!(listed, contract_type_names(APP_TO_SERVER));
}

#[test]
fn app_examples_fill_exactly_the_contract_fields() {
    let envelope = envelope_validator();
    for (text, body) in app_examples() {
        let wire: Value = serde_json::from_str(text).expect("example is JSON");
        let type_name = body.type_name();
        assert_valid(&envelope, &wire, &format!("envelope of {type_name}"));
        let strict = compile(&strict_payload_schema(APP_TO_SERVER, type_name));
        assert_valid(
            &strict,
            &wire["payload"],
            &format!("strict payload of {type_name}"),
        );
    }
}

#[test]
fn every_app_frame_type_parses_into_its_variant() {
    for (text, expected) in app_examples() {
        let frame = parse_ok(text);
        assert_eq!(frame.body, expected, "{text}");
        let wire: Value = serde_json::from_str(text).expect("example is JSON");
        assert_eq!(frame.id, wire["id"].as_u64());
        assert_eq!(frame.chat_id.as_deref(), wire["chat_id"].as_str());
    }
}

#[test]
fn app_frames_serialize_back_to_the_same_json() {
    for (text, _) in app_examples() {
        let wire: Value = serde_json::from_str(text).expect("example is JSON");
        let frame = parse_ok(text);
        assert_eq!(serde_json::to_value(&frame).expect("serializes"), wire);
        let reread: AppFrame = serde_json::from_str(&frame.to_json()).expect("deserializes");
        assert_eq!(reread, frame);
    }
}

#[test]
fn missing_or_null_payload_counts_as_empty() {
    let frame = parse_ok(r#"{"v":1,"type":"agent.stop","chat_id":"android:default"}"#);
    assert_eq!(frame.body, AgentStop {}.into());
    let frame = parse_ok(r#"{"v":1,"type":"ping"}"#);
    assert_eq!(frame.body, Ping::default().into());
    let frame = parse_ok(r#"{"v":1,"type":"ping","payload":null}"#);
    assert_eq!(frame.body, Ping::default().into());
}

// ---------------------------------------------------------------------------------------------
// (3) Unknown fields are ignored
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_payload_and_envelope_fields_are_ignored() {
    let frame = parse_ok(
        r#"{"v":1,"id":4,"type":"message.send","trace":"x","payload":{"text":"hi","future":{"a":[1]}}}"#,
    );
    assert_eq!(frame.id, Some(4));
    assert_eq!(
        frame.body,
        MessageSend {
            text: text("hi"),
            ..MessageSend::default()
        }
        .into()
    );
    let frame = parse_ok(r#"{"v":1,"type":"channel.delete","payload":{"confirm":true}}"#);
    assert_eq!(frame.body, ChannelDelete {}.into());
}

// ---------------------------------------------------------------------------------------------
// (4) Rejections carry the request id
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_type_is_rejected_with_the_request_id() {
    let error = parse_err(r#"{"v":1,"id":77,"type":"foo","payload":{}}"#);
    assert_eq!(error.request_id, Some(77));
    assert_eq!(error.kind, ProtocolErrorKind::UnknownType("foo".into()));
    assert_eq!(error.to_string(), "unknown frame type \"foo\"");
}

#[test]
fn server_only_type_sent_by_the_app_is_unknown() {
    let error = parse_err(r#"{"v":1,"id":3,"type":"message","payload":{}}"#);
    assert_eq!(error.kind, ProtocolErrorKind::UnknownType("message".into()));
}

#[test]
fn wrong_missing_or_non_integer_version_is_rejected_with_the_request_id() {
    let error = parse_err(r#"{"v":2,"id":8,"type":"ping"}"#);
    assert_eq!(error.request_id, Some(8));
    assert_eq!(
        error.kind,
        ProtocolErrorKind::WrongVersion {
            found: Some(json!(2))
        }
    );
    assert_eq!(
        error.to_string(),
        "protocol version 2 is not supported; this server speaks v1"
    );

    let error = parse_err(r#"{"id":9,"type":"ping"}"#);
    assert_eq!(error.request_id, Some(9));
    assert_eq!(error.kind, ProtocolErrorKind::WrongVersion { found: None });

    let error = parse_err(r#"{"v":"1","type":"ping"}"#);
    assert!(matches!(error.kind, ProtocolErrorKind::WrongVersion { .. }));
}

#[test]
fn malformed_json_or_non_object_is_malformed() {
    for text in ["{not json", "[1,2]", "\"hello\"", "", "null"] {
        let error = parse_err(text);
        assert!(
            matches!(error.kind, ProtocolErrorKind::Malformed(_)),
            "{text}: {error:?}"
        );
        assert_eq!(error.request_id, None);
    }
}

#[test]
fn missing_type_or_mistyped_envelope_fields_are_malformed_but_keep_the_id() {
    for text in [
        r#"{"v":1,"id":12,"payload":{}}"#,
        r#"{"v":1,"id":12,"type":5}"#,
        r#"{"v":1,"id":12,"type":"ping","chat_id":7}"#,
        r#"{"v":1,"id":12,"type":"ping","thread_id":false}"#,
    ] {
        let error = parse_err(text);
        assert!(
            matches!(error.kind, ProtocolErrorKind::Malformed(_)),
            "{text}: {error:?}"
        );
        assert_eq!(error.request_id, Some(12), "{text}");
    }
}

#[test]
fn id_that_is_not_a_non_negative_integer_is_malformed() {
    for text in [
        r#"{"v":1,"id":-1,"type":"ping"}"#,
        r#"{"v":1,"id":1.5,"type":"ping"}"#,
        r#"{"v":1,"id":"7","type":"ping"}"#,
    ] {
        let error = parse_err(text);
        assert!(
            matches!(error.kind, ProtocolErrorKind::Malformed(_)),
            "{text}: {error:?}"
        );
        assert_eq!(error.request_id, None);
    }
}

#[test]
fn payload_field_of_the_wrong_type_is_bad_payload_with_the_request_id() {
    let error = parse_err(r#"{"v":1,"id":31,"type":"message.send","payload":{"text":42}}"#);
    assert_eq!(error.request_id, Some(31));
    let ProtocolErrorKind::BadPayload { type_name, detail } = &error.kind else {
        panic!("expected BadPayload, got {error:?}");
    };
    assert_eq!(type_name, "message.send");
    assert!(
        detail.contains("\"text\""),
        "detail names the field: {detail}"
    );
    assert!(
        error
            .to_string()
            .starts_with("bad payload for \"message.send\""),
        "{error}"
    );

    let error =
        parse_err(r#"{"v":1,"id":32,"type":"media.upload.start","payload":{"kind":"gif"}}"#);
    assert!(
        matches!(error.kind, ProtocolErrorKind::BadPayload { .. }),
        "{error:?}"
    );
    assert_eq!(error.request_id, Some(32));
}

#[test]
fn payload_that_is_not_an_object_is_bad_payload() {
    let error = parse_err(r#"{"v":1,"id":33,"type":"ping","payload":[1]}"#);
    assert_eq!(error.request_id, Some(33));
    assert!(
        matches!(error.kind, ProtocolErrorKind::BadPayload { .. }),
        "{error:?}"
    );
}

#[test]
fn history_limit_outside_1_to_200_is_rejected() {
    for limit in ["0", "201", "-1", "5000000000"] {
        let text = format!(r#"{{"v":1,"id":40,"type":"history","payload":{{"limit":{limit}}}}}"#);
        let error = parse_err(&text);
        assert_eq!(error.request_id, Some(40));
        assert!(
            matches!(error.kind, ProtocolErrorKind::BadPayload { .. }),
            "{limit}: {error:?}"
        );
    }
    for limit in [MIN_HISTORY_LIMIT, MAX_HISTORY_LIMIT] {
        let text = format!(r#"{{"v":1,"type":"history","payload":{{"limit":{limit}}}}}"#);
        let AppBody::History(request) = parse_ok(&text).body else {
            panic!("history parses as History");
        };
        assert_eq!(request.limit, Some(limit));
    }
}

// ---------------------------------------------------------------------------------------------
// (5) The error answer to a rejected frame
// ---------------------------------------------------------------------------------------------

#[test]
fn error_frame_from_a_protocol_error_validates_and_answers_the_request() {
    let envelope = envelope_validator();
    let payload = compile(&strict_payload_schema(SERVER_TO_APP, "error"));
    for text in [
        r#"{"v":1,"id":77,"type":"foo"}"#,
        r#"{"v":3,"id":78,"type":"ping"}"#,
        r#"{"v":1,"id":79,"type":"sync","payload":{"cursor":"x"}}"#,
        "{oops",
    ] {
        let error = parse_err(text);
        let frame = error.to_error_frame();
        assert_eq!(frame.id, error.request_id);
        let wire = serialized(&frame);
        assert_valid(&envelope, &wire, "error frame envelope");
        assert_valid(&payload, &wire["payload"], "error frame payload");
        assert_eq!(wire["type"], "error");
        assert_eq!(wire["payload"]["code"], "unsupported");
        assert_eq!(wire["payload"]["message"], error.to_string());
    }
}

#[test]
fn every_error_code_is_in_the_contract_enum() {
    let contract = contract();
    let allowed = &contract["frame_types"][SERVER_TO_APP]["error"]["payload"]["code"]["enum"];
    let codes = [
        ErrorCode::Auth,
        ErrorCode::NotFound,
        ErrorCode::RateLimited,
        ErrorCode::MediaTooLarge,
        ErrorCode::Unsupported,
        ErrorCode::Internal,
    ];
    let ours: Vec<Value> = codes.iter().map(|code| json!(code)).collect();
    assert_eq!(&Value::Array(ours), allowed);
}

// ---------------------------------------------------------------------------------------------
// (6) Reliability classification
// ---------------------------------------------------------------------------------------------

#[test]
fn never_dropped_classification_matches_the_contract_for_every_server_type() {
    for body in example_server_bodies() {
        let type_name = body.type_name();
        let expected = contract_says_never_dropped(type_name);
        assert_eq!(body.is_never_dropped(), expected, "{type_name}");
        assert_eq!(is_never_dropped_type(type_name), expected, "{type_name}");
    }
}

// ---------------------------------------------------------------------------------------------
// (7) Server frames round-trip
// ---------------------------------------------------------------------------------------------

#[test]
fn every_server_frame_round_trips_through_json() {
    for frame in example_server_frames() {
        let reread: ServerFrame = serde_json::from_str(&frame.to_json())
            .unwrap_or_else(|error| panic!("{} reads back: {error}", frame.to_json()));
        assert_eq!(reread, frame);
    }
    let bare = ServerFrame::new(AgentIdle {});
    let reread: ServerFrame = serde_json::from_str(&bare.to_json()).expect("reads back");
    assert_eq!(reread, bare);
}

#[test]
fn server_frame_without_payload_reads_as_empty_payload() {
    let frame: ServerFrame =
        serde_json::from_str(r#"{"v":1,"type":"agent.idle"}"#).expect("reads back");
    assert_eq!(frame, ServerFrame::new(AgentIdle {}));
}

#[test]
fn server_frame_of_another_version_does_not_deserialize() {
    let result = serde_json::from_str::<ServerFrame>(r#"{"v":2,"type":"agent.idle","payload":{}}"#);
    assert!(result.is_err());
}
