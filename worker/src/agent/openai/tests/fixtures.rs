//! Test support: answers in the shapes real OpenAI-compatible servers stream, copied from
//! a recorded Hermes 0.19 session and the scripted fake LLM it ran against (tests never
//! read the recordings themselves).

use serde_json::{json, Value};

use super::fake_upstream::{Reply, Step};

/// The model the scripted fake LLM lists and answers as.
pub const FAKE_MODEL: &str = "fake-model";

/// A `chat.completion.chunk` with one choice, as the scripted fake LLM sends it.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-fake0001", "object": "chat.completion.chunk", "created": 1795986328,
        "model": FAKE_MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// The chunk with empty choices that carries usage (`stream_options.include_usage`).
pub fn usage_chunk(total_tokens: u64) -> Value {
    json!({
        "id": "chatcmpl-fake0001", "object": "chat.completion.chunk", "created": 1795986328,
        "model": FAKE_MODEL, "choices": [],
        "usage": {"prompt_tokens": 100, "completion_tokens": total_tokens - 100, "total_tokens": total_tokens},
    })
}

/// The scripted fake LLM's plain answer: a role chunk, reasoning, text, a finish, usage,
/// then `[DONE]`.
pub fn reasoning_then_text() -> Vec<Step> {
    let mut steps = vec![Step::data(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    for reasoning in ["The ", "user ", "said ", "hello."] {
        steps.push(Step::data(chunk(
            json!({"reasoning_content": reasoning}),
            None,
        )));
    }
    for text in ["Hello ", "from ", "the ", "fake ", "LLM!"] {
        steps.push(Step::data(chunk(json!({"content": text}), None)));
    }
    steps.push(Step::data(chunk(json!({}), Some("stop"))));
    steps.push(Step::data(usage_chunk(110)));
    steps.push(Step::done());
    steps
}

/// The scripted fake LLM asking for the terminal tool: streamed `tool_calls` deltas.
pub fn tool_call_request() -> Vec<Step> {
    let call = json!({"tool_calls": [{"index": 0, "id": "call_0001", "type": "function",
                                      "function": {"name": "terminal", "arguments": ""}}]});
    let mut steps = vec![
        Step::data(chunk(json!({"role": "assistant", "content": ""}), None)),
        Step::data(chunk(call, None)),
    ];
    for part in [r#"{"command": "#, r#""ls /tmp"}"#] {
        let arguments = json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]});
        steps.push(Step::data(chunk(arguments, None)));
    }
    steps.push(Step::data(chunk(json!({}), Some("tool_calls"))));
    steps.push(Step::data(usage_chunk(110)));
    steps.push(Step::done());
    steps
}

/// `GET /v1/models` listing `ids`.
pub fn model_list(ids: &[&str]) -> Reply {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "fake"}))
        .collect();
    Reply::Json(200, json!({"object": "list", "data": data}))
}

/// Hermes 0.19's `/v1/chat/completions` stream for "please run ls", verbatim: tool
/// progress events between the chunks, usage in the finishing chunk.
pub const HERMES_RUN_LS_STREAM: &str = r#"
data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]}

event: hermes.tool.progress
data: {"tool": "terminal", "emoji": "\ud83d\udcbb", "label": "ls /tmp", "toolCallId": "call_0014", "status": "running"}

event: hermes.tool.progress
data: {"tool": "terminal", "toolCallId": "call_0014", "status": "completed"}

data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {"content": "\n\nTool "}, "finish_reason": null}]}

data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {"content": "result "}, "finish_reason": null}]}

data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {"content": "received: "}, "finish_reason": null}]}

data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {"content": "{\"output\": \"alpha.txt\\nbeta.txt"}, "finish_reason": null}]}

data: {"id": "chatcmpl-609ca5ca78ba4f1ea558b5576c385", "object": "chat.completion.chunk", "created": 1795986328, "model": "hermes-agent", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}}

data: [DONE]

"#;
