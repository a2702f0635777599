//! What a turn sends: the conversation, the key, the route and the model.

use serde_json::json;

use super::fake_upstream::{FakeUpstream, Reply};
use super::fixtures::{model_list, reasoning_then_text, FAKE_MODEL};
use super::{config_for, connect, done, streaming, turn_events, user_says};
use crate::agent::{Agent, ChatMessage, OpenAiAgent, TurnInput, UpstreamConfig};

#[tokio::test]
async fn the_request_streams_with_usage_and_sends_the_history_before_the_new_message() {
    let upstream = streaming(reasoning_then_text).await;
    let agent = connect(&upstream).await;
    let input = TurnInput {
        text: "and now?".into(),
        history: vec![
            ChatMessage {
                role: "user".into(),
                content: "hi".into(),
            },
            ChatMessage {
                role: "assistant".into(),
                content: "hello!".into(),
            },
        ],
        ..Default::default()
    };
    turn_events(&agent, input).await;
    let request = upstream.chat_request();
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.body,
        json!({
            "model": FAKE_MODEL,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello!"},
                {"role": "user", "content": "and now?"},
            ],
        })
    );
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token_on_every_request() {
    let upstream = streaming(reasoning_then_text).await;
    let config = UpstreamConfig {
        api_key: Some("sk-test-key".into()),
        ..config_for(&upstream)
    };
    let agent = OpenAiAgent::connect(config).await.unwrap();
    turn_events(&agent, user_says("hello")).await;
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert_eq!(request.authorization.as_deref(), Some("Bearer sk-test-key"));
    }
}

#[tokio::test]
async fn a_base_url_ending_in_v1_reaches_the_same_routes() {
    let upstream = streaming(reasoning_then_text).await;
    let config = UpstreamConfig {
        url: format!("{}/v1/", upstream.url),
        ..Default::default()
    };
    let agent = OpenAiAgent::connect(config).await.unwrap();
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(events.last(), Some(&done(FAKE_MODEL, 110)));
}

#[tokio::test]
async fn the_turn_model_wins_over_the_configured_model() {
    let upstream = streaming(reasoning_then_text).await;
    let config = UpstreamConfig {
        model: Some("configured-model".into()),
        ..config_for(&upstream)
    };
    let agent = OpenAiAgent::connect(config).await.unwrap();
    let input = TurnInput {
        model: Some("chosen-model".into()),
        ..user_says("hello")
    };
    turn_events(&agent, input).await;
    assert_eq!(upstream.chat_request().body["model"], "chosen-model");
}

#[tokio::test]
async fn the_configured_model_wins_over_the_first_listed_model() {
    let upstream = streaming(reasoning_then_text).await;
    let config = UpstreamConfig {
        model: Some("configured-model".into()),
        ..config_for(&upstream)
    };
    let agent = OpenAiAgent::connect(config).await.unwrap();
    assert_eq!(agent.default_model().as_deref(), Some("configured-model"));
    turn_events(&agent, user_says("hello")).await;
    assert_eq!(upstream.chat_request().body["model"], "configured-model");
}

#[tokio::test]
async fn the_first_listed_model_is_used_when_nothing_names_one() {
    let upstream = FakeUpstream::start(|request| match request.path.as_str() {
        "/v1/models" => model_list(&["first-model", "second-model"]),
        _ => Reply::Stream(reasoning_then_text()),
    })
    .await;
    let agent = connect(&upstream).await;
    assert_eq!(agent.default_model().as_deref(), Some("first-model"));
    turn_events(&agent, user_says("hello")).await;
    assert_eq!(upstream.chat_request().body["model"], "first-model");
}
