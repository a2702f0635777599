//! Turns that succeed: the events a streamed answer becomes, from a plain LLM and from
//! Hermes (tool progress in between), and streams that end without `[DONE]`.

use serde_json::json;

use super::fake_upstream::Step;
use super::fixtures::{
    chunk, reasoning_then_text, tool_call_request, usage_chunk, FAKE_MODEL, HERMES_RUN_LS_STREAM,
};
use super::{connect, done, reasoning, streaming, text, turn_events, user_says};
use crate::agent::AgentEvent;

#[tokio::test]
async fn a_streamed_answer_yields_reasoning_then_text_then_done_with_the_usage_tokens() {
    let upstream = streaming(reasoning_then_text).await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(
        events,
        vec![
            reasoning("The "),
            reasoning("user "),
            reasoning("said "),
            reasoning("hello."),
            text("Hello "),
            text("from "),
            text("the "),
            text("fake "),
            text("LLM!"),
            done(FAKE_MODEL, 110),
        ]
    );
}

#[tokio::test]
async fn hermes_tool_progress_becomes_tool_events_around_the_answer() {
    let upstream = streaming(|| vec![Step::Send(HERMES_RUN_LS_STREAM.into())]).await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("please run ls")).await;
    assert_eq!(
        events,
        vec![
            AgentEvent::ToolStarted {
                name: "terminal".into(),
                preview: Some("ls /tmp".into()),
                args: None,
            },
            AgentEvent::ToolCompleted {
                name: "terminal".into(),
                duration_secs: None,
                ok: true,
                output_preview: None,
            },
            text("\n\nTool "),
            text("result "),
            text("received: "),
            // The tool output is quoted as JSON text, so its newline stays escaped.
            text(r#"{"output": "alpha.txt\nbeta.txt"#),
            done("hermes-agent", 220),
        ]
    );
}

#[tokio::test]
async fn streamed_tool_calls_are_ignored_and_the_turn_still_finishes() {
    let upstream = streaming(tool_call_request).await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("run ls")).await;
    assert_eq!(events, vec![done(FAKE_MODEL, 110)]);
}

#[tokio::test]
async fn a_stream_closed_after_a_finish_reason_without_done_is_done() {
    let upstream = streaming(|| {
        vec![
            Step::data(chunk(json!({"content": "Hi"}), None)),
            Step::data(chunk(json!({}), Some("stop"))),
            Step::data(usage_chunk(120)),
        ]
    })
    .await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(events, vec![text("Hi"), done(FAKE_MODEL, 120)]);
}
