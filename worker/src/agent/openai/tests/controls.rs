//! Controls of a running turn: stopping cancels it and hangs up; approving and steering
//! are refused.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;

use super::fake_upstream::Step;
use super::fixtures::{chunk, reasoning_then_text, FAKE_MODEL};
use super::{connect, done, streaming, text, user_says};
use crate::agent::{Agent, AgentCaps, AgentError, AgentEvent};

#[tokio::test]
async fn stopping_a_slow_stream_cancels_the_turn_and_closes_the_connection() {
    let upstream = streaming(|| {
        vec![
            Step::data(chunk(json!({"content": "tick0 "}), None)),
            Step::Pause(Duration::from_secs(5)),
            Step::data(chunk(json!({"content": "tick1 "}), None)),
            Step::done(),
        ]
    })
    .await;
    let agent = connect(&upstream).await;
    let run = agent.start(user_says("slow"));
    let mut events = run.events;
    assert_eq!(events.next().await, Some(text("tick0 ")));
    run.control.stop().await.unwrap();
    assert_eq!(
        events.collect::<Vec<_>>().await,
        vec![AgentEvent::Cancelled]
    );
    assert!(upstream.client_hung_up().await, "the server still streams");
}

#[tokio::test]
async fn a_turn_stopped_before_it_starts_is_cancelled_without_a_request() {
    let upstream = streaming(reasoning_then_text).await;
    let agent = connect(&upstream).await;
    let run = agent.start(user_says("hello"));
    run.control.stop().await.unwrap();
    assert_eq!(
        run.events.collect::<Vec<_>>().await,
        vec![AgentEvent::Cancelled]
    );
    assert!(upstream
        .requests()
        .iter()
        .all(|request| request.path != "/v1/chat/completions"));
}

#[tokio::test]
async fn approvals_and_steering_are_refused_and_the_caps_say_so() {
    let upstream = streaming(reasoning_then_text).await;
    let agent = connect(&upstream).await;
    assert_eq!(
        agent.caps(),
        AgentCaps {
            tools: false,
            reasoning: true,
            approvals: false,
            steer: false,
        }
    );
    let run = agent.start(user_says("hello"));
    assert!(matches!(
        run.control.approve("any", "once").await,
        Err(AgentError::NotActive(_))
    ));
    assert!(matches!(
        run.control.steer("faster").await,
        Err(AgentError::Unsupported(_))
    ));
}

#[tokio::test]
async fn dropping_the_controls_does_not_stop_the_turn() {
    let upstream = streaming(reasoning_then_text).await;
    let agent = connect(&upstream).await;
    let run = agent.start(user_says("hello"));
    drop(run.control);
    let events: Vec<_> = run.events.collect().await;
    assert_eq!(events.len(), 10);
    assert_eq!(events.last(), Some(&done(FAKE_MODEL, 110)));
}
