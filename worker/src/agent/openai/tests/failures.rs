//! Turns that fail: each ends with exactly one `Failed` saying why.

use std::time::Duration;

use serde_json::json;

use super::fake_upstream::{Reply, Step};
use super::fixtures::chunk;
use super::{config_for, connect, streaming, text, turn_events, upstream, user_says};
use crate::agent::openai::endpoint::Timeouts;
use crate::agent::{AgentEvent, OpenAiAgent};

#[tokio::test]
async fn an_openai_error_answer_fails_the_turn_with_its_message() {
    let upstream = upstream(|_| {
        let error = json!({"error": {"message": "scripted failure (fail400)",
                                     "type": "invalid_request_error", "code": "scripted"}});
        Reply::Json(400, error)
    })
    .await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("fail400")).await;
    assert_eq!(
        events,
        vec![AgentEvent::Failed(
            "the agent upstream refused the turn: 400 Bad Request: scripted failure (fail400)"
                .into()
        )]
    );
}

#[tokio::test]
async fn an_error_object_inside_the_stream_fails_the_turn() {
    let upstream = streaming(|| {
        vec![
            Step::data(chunk(json!({"content": "Hel"}), None)),
            Step::data(
                json!({"error": {"message": "upstream overloaded", "type": "server_error"}}),
            ),
        ]
    })
    .await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(
        events,
        vec![
            text("Hel"),
            AgentEvent::Failed("the agent upstream failed: upstream overloaded".into()),
        ]
    );
}

#[tokio::test]
async fn a_stream_that_drops_midway_fails_the_turn() {
    let upstream = streaming(|| {
        vec![
            Step::data(chunk(json!({"content": "Hello "}), None)),
            Step::HangUp,
        ]
    })
    .await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("hello")).await;
    let [first, AgentEvent::Failed(why)] = events.as_slice() else {
        panic!("expected a text delta, then a failure: {events:?}");
    };
    assert_eq!(first, &text("Hello "));
    assert!(
        why.starts_with("the connection to the agent upstream broke: "),
        "{why}"
    );
}

#[tokio::test]
async fn a_stream_closed_without_finish_reason_or_done_fails() {
    let upstream = streaming(|| vec![Step::data(chunk(json!({"content": "Hi"}), None))]).await;
    let agent = connect(&upstream).await;
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(
        events,
        vec![
            text("Hi"),
            AgentEvent::Failed(
                "the agent upstream closed the stream before the answer was complete".into()
            ),
        ]
    );
}

#[tokio::test]
async fn a_silent_stream_fails_after_the_idle_timeout() {
    let upstream = streaming(|| {
        vec![
            Step::data(chunk(json!({"content": "Hi"}), None)),
            Step::Pause(Duration::from_secs(5)),
        ]
    })
    .await;
    let timeouts = Timeouts {
        idle: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let agent = OpenAiAgent::connect_with(config_for(&upstream), timeouts)
        .await
        .unwrap();
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(
        events,
        vec![
            text("Hi"),
            AgentEvent::Failed("the agent upstream sent nothing for 200ms".into()),
        ]
    );
}
