//! Connecting and listing models: clear errors naming the setting to fix, and the model
//! list kept fresh with the last one as a fallback.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::fake_upstream::{FakeUpstream, Reply};
use super::fixtures::{model_list, reasoning_then_text, FAKE_MODEL};
use super::{config_for, connect, done, turn_events, upstream_error_of, user_says};
use crate::agent::{Agent, ModelInfo, OpenAiAgent, UpstreamConfig};

#[tokio::test]
async fn connect_names_the_api_key_setting_when_the_key_is_rejected() {
    let upstream = FakeUpstream::start(|_| {
        let error = json!({"error": {"message": "Invalid API key", "type": "invalid_api_key"}});
        Reply::Json(401, error)
    })
    .await;
    let config = UpstreamConfig {
        api_key: Some("sk-wrong".into()),
        ..config_for(&upstream)
    };
    let message = upstream_error_of(OpenAiAgent::connect(config).await);
    assert_eq!(
        message,
        format!(
            "the OpenAI-compatible agent at {} rejected the API key \
             (401 Unauthorized: Invalid API key); check IRIS_AGENT_API_KEY",
            upstream.url
        )
    );
}

#[tokio::test]
async fn connect_names_the_url_setting_when_the_upstream_is_unreachable() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config = UpstreamConfig {
        url: url.clone(),
        ..Default::default()
    };
    let message = upstream_error_of(OpenAiAgent::connect(config).await);
    assert!(
        message.starts_with(&format!(
            "cannot reach the OpenAI-compatible agent at {url} ("
        )),
        "{message}"
    );
    assert!(message.ends_with("); check IRIS_AGENT_URL"), "{message}");
}

#[tokio::test]
async fn connect_accepts_a_missing_model_list_when_a_model_is_configured() {
    let upstream = FakeUpstream::start(|request| match request.path.as_str() {
        "/v1/models" => Reply::Json(404, json!({"error": {"message": "not found"}})),
        _ => Reply::Stream(reasoning_then_text()),
    })
    .await;
    let config = UpstreamConfig {
        model: Some("local-model".into()),
        ..config_for(&upstream)
    };
    let agent = OpenAiAgent::connect(config).await.unwrap();
    let offered = agent.models().await.unwrap();
    assert_eq!(
        offered,
        vec![ModelInfo {
            id: "local-model".into(),
            label: "local-model".into(),
        }]
    );
    let events = turn_events(&agent, user_says("hello")).await;
    assert_eq!(events.last(), Some(&done(FAKE_MODEL, 110)));
}

#[tokio::test]
async fn connect_refuses_a_missing_model_list_without_a_configured_model() {
    let upstream = FakeUpstream::start(|_| Reply::Json(404, json!({}))).await;
    let message = upstream_error_of(OpenAiAgent::connect(config_for(&upstream)).await);
    assert!(message.contains("has no /v1/models"), "{message}");
    assert!(message.contains("IRIS_AGENT_MODEL"), "{message}");
}

#[tokio::test]
async fn models_are_listed_fresh_and_the_last_list_is_offered_when_listing_fails() {
    let listings = AtomicUsize::new(0);
    let upstream = FakeUpstream::start(move |_| match listings.fetch_add(1, Ordering::SeqCst) {
        0 => model_list(&["model-a", "model-b"]),
        1 => model_list(&["model-b", "model-c"]),
        _ => Reply::Json(500, json!({"error": {"message": "down"}})),
    })
    .await;
    let agent = connect(&upstream).await;
    assert_eq!(agent.default_model().as_deref(), Some("model-a"));
    let fresh = vec![
        ModelInfo {
            id: "model-b".into(),
            label: "model-b".into(),
        },
        ModelInfo {
            id: "model-c".into(),
            label: "model-c".into(),
        },
    ];
    assert_eq!(agent.models().await.unwrap(), fresh);
    assert_eq!(agent.default_model().as_deref(), Some("model-b"));
    assert_eq!(agent.models().await.unwrap(), fresh);
    assert_eq!(upstream.requests().len(), 3);
}
