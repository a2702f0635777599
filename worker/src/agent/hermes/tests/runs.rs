//! Runs from submission to their end: what is sent, how recorded events translate, and how
//! a refused submission ends the turn.

use serde_json::json;

use super::fake_hermes::Step::Send;
use super::fake_hermes::{FakeHermes, Script, API_KEY};
use super::fixtures::{HELLO, LLM_FAIL_400, RUN_LS};
use super::{
    connected, done, remaining_events, text, tool_completed, tool_started, turn, unused_url,
};
use crate::agent::hermes::endpoint::Endpoint;
use crate::agent::hermes::{HermesAgent, IDLE_LIMIT};
use crate::agent::{Agent, AgentEvent, ChatMessage, TurnInput};

#[tokio::test]
async fn a_plain_answer_streams_its_text_and_ends_with_done() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("hello")).events).await;
    // `reasoning.available` repeats the answer in 0.19 and must not show up as reasoning.
    let expected = [
        text("Hello "),
        text("from "),
        text("the "),
        text("fake "),
        text("LLM!"),
        done(110),
    ];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn the_run_carries_the_text_history_session_and_chosen_model() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let agent = connected(&fake).await;
    let input = TurnInput {
        text: "hello three".to_owned(),
        history: vec![
            ChatMessage {
                role: "user".to_owned(),
                content: "hello".to_owned(),
            },
            ChatMessage {
                role: "assistant".to_owned(),
                content: "Hello from the fake LLM!".to_owned(),
            },
        ],
        model: Some("fake-model".to_owned()),
        session_id: "chat-7".to_owned(),
        turn_key: "turn-1".to_owned(),
        images: Vec::new(),
        media_ids: Vec::new(),
    };
    remaining_events(agent.start(input).events).await;
    let expected = json!({
        "input": "hello three",
        "conversation_history": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "Hello from the fake LLM!"},
        ],
        "session_id": "chat-7",
        "model": "fake-model",
    });
    assert_eq!(fake.posted("/v1/runs"), vec![expected]);
}

#[tokio::test]
async fn the_run_names_no_model_when_the_chat_chose_none() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let agent = connected(&fake).await;
    remaining_events(agent.start(turn("hello")).events).await;
    let expected = json!({"input": "hello", "conversation_history": [], "session_id": "chat-1"});
    assert_eq!(fake.posted("/v1/runs"), vec![expected]);
}

#[tokio::test]
async fn done_names_the_chosen_model_when_hermes_has_no_run_status() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]).without_run_status());
    let agent = connected(&fake).await;
    let input = TurnInput {
        model: Some("fake-model".to_owned()),
        ..turn("hello")
    };
    let events = remaining_events(agent.start(input).events).await;
    let expected = AgentEvent::Done {
        model: Some("fake-model".to_owned()),
        tokens: Some(110),
    };
    assert_eq!(events.last(), Some(&expected));
}

#[tokio::test]
async fn a_tool_call_reports_its_start_and_completion_before_the_answer() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(RUN_LS)]));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("please run ls")).events).await;
    let expected = [
        tool_started("ls /tmp"),
        tool_completed(0.818, true),
        text("\n\nTool "),
        text("result "),
        text("received: "),
        text(r#"{"output": "alpha.txt\nbeta.txt"#),
        done(220),
    ];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn a_failed_llm_call_ends_the_turn_with_hermes_reason() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(LLM_FAIL_400)]));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("please fail400")).events).await;
    let expected = [AgentEvent::Failed(
        "HTTP 400: scripted failure (fail400)".to_owned(),
    )];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn too_many_runs_end_the_turn_with_one_failure_quoting_hermes() {
    let body = r#"{"error": {"message": "Too many concurrent runs (max 10)", "type": "rate_limit_error", "param": null, "code": "too_many_runs"}}"#;
    let fake = FakeHermes::start(Script::refusing(429, body));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("hello")).events).await;
    let expected = [AgentEvent::Failed(
        "Hermes refused the run (429 Too Many Requests: Too many concurrent runs (max 10))"
            .to_owned(),
    )];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn a_key_refused_at_submission_ends_the_turn_naming_iris_agent_api_key() {
    let body = r#"{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;
    let fake = FakeHermes::start(Script::refusing(401, body));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("hello")).events).await;
    let expected = [AgentEvent::Failed(
        "Hermes refused the run (401 Unauthorized: Invalid API key); check IRIS_AGENT_API_KEY"
            .to_owned(),
    )];
    assert_eq!(events, expected);
}

#[tokio::test]
async fn a_hermes_gone_at_submission_ends_the_turn_with_one_failure() {
    // Connected earlier, gone now: built directly, as connecting would fail.
    let url = unused_url();
    let agent = HermesAgent {
        endpoint: Endpoint::new(&url, Some(API_KEY.into())).unwrap(),
        steer_path: None,
        default_model: None,
        idle_limit: IDLE_LIMIT,
    };
    let events = remaining_events(agent.start(turn("hello")).events).await;
    let [AgentEvent::Failed(reason)] = events.as_slice() else {
        panic!("expected one failure, got {events:?}");
    };
    assert!(
        reason.starts_with(&format!("cannot reach Hermes at {url}: ")),
        "{reason}"
    );
}
