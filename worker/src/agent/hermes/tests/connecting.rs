//! Connecting: URL forms, refused keys, unreachable servers, capabilities and models.

use serde_json::json;

use super::fake_hermes::Step::{AwaitStop, Send};
use super::fake_hermes::{FakeHermes, Script, HERMES_MODEL, RUN_ID};
use super::fixtures::{HELLO, TICKS_AFTER_STOP, TICKS_BEFORE_STOP};
use super::{connected, remaining_events, text, turn, unused_url};
use crate::agent::hermes::HermesAgent;
use crate::agent::{Agent, AgentCaps, AgentError, AgentEvent, ModelInfo, UpstreamConfig};

#[tokio::test]
async fn connect_accepts_the_url_with_a_trailing_v1() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let config = UpstreamConfig {
        url: format!("{}/v1/", fake.url()),
        ..fake.config()
    };
    let agent = HermesAgent::connect(config).await.unwrap();
    assert_eq!(agent.models().await.unwrap().len(), 1);
}

#[tokio::test]
async fn connect_refuses_a_wrong_key_naming_iris_agent_api_key() {
    let fake = FakeHermes::start(Script::streaming(Vec::new()));
    let config = UpstreamConfig {
        api_key: Some("wrong-key-0123456789".into()),
        ..fake.config()
    };
    let err = HermesAgent::connect(config).await.unwrap_err();
    let AgentError::Upstream(message) = err else {
        panic!("expected an upstream error, got {err:?}");
    };
    assert!(message.contains("IRIS_AGENT_API_KEY"), "{message}");
    assert!(message.contains("Invalid API key"), "{message}");
}

#[tokio::test]
async fn connect_without_a_key_asks_for_iris_agent_api_key() {
    let fake = FakeHermes::start(Script::streaming(Vec::new()));
    let config = UpstreamConfig {
        api_key: None,
        ..fake.config()
    };
    let message = HermesAgent::connect(config).await.unwrap_err().to_string();
    assert!(message.contains("needs an API key"), "{message}");
    assert!(message.contains("IRIS_AGENT_API_KEY"), "{message}");
}

#[tokio::test]
async fn connect_reports_an_unreachable_hermes_naming_iris_agent_url() {
    let url = unused_url();
    let config = UpstreamConfig {
        url: url.clone(),
        ..UpstreamConfig::default()
    };
    let err = HermesAgent::connect(config).await.unwrap_err();
    let AgentError::Upstream(message) = err else {
        panic!("expected an upstream error, got {err:?}");
    };
    assert!(message.contains("IRIS_AGENT_URL"), "{message}");
    assert!(message.contains(&url), "{message}");
}

#[tokio::test]
async fn hermes_0_19_offers_tools_and_approvals_but_no_steering() {
    let fake = FakeHermes::start(Script::streaming(Vec::new()));
    let agent = connected(&fake).await;
    let expected = AgentCaps {
        tools: true,
        reasoning: false,
        approvals: true,
        steer: false,
    };
    assert_eq!(agent.caps(), expected);
}

#[tokio::test]
async fn steering_hermes_0_19_is_unsupported_without_asking_it() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let agent = connected(&fake).await;
    let run = agent.start(turn("hello"));
    let err = run.control.steer("shorter please").await.unwrap_err();
    assert!(matches!(err, AgentError::Unsupported(_)), "{err:?}");
    assert!(fake.posted(&format!("/v1/runs/{RUN_ID}/steer")).is_empty());
}

#[tokio::test]
async fn a_hermes_announcing_steering_is_steered_at_its_route() {
    let steps = vec![Send(TICKS_BEFORE_STOP), AwaitStop, Send(TICKS_AFTER_STOP)];
    let fake = FakeHermes::start(Script::streaming(steps).with_steer());
    let agent = connected(&fake).await;
    assert!(agent.caps().steer);
    let run = agent.start(turn("be slow please"));
    run.control.steer("shorter please").await.unwrap();
    assert_eq!(
        fake.posted(&format!("/v1/runs/{RUN_ID}/steer")),
        vec![json!({"text": "shorter please"})]
    );
    run.control.stop().await.unwrap();
    let expected = [
        text("tick0 "),
        text("tick1 "),
        text("tick2 "),
        AgentEvent::Cancelled,
    ];
    assert_eq!(remaining_events(run.events).await, expected);
}

#[tokio::test]
async fn models_are_listed_from_v1_models() {
    let fake = FakeHermes::start(Script::streaming(Vec::new()));
    let agent = connected(&fake).await;
    let expected = ModelInfo {
        id: HERMES_MODEL.to_owned(),
        label: HERMES_MODEL.to_owned(),
    };
    assert_eq!(agent.models().await.unwrap(), vec![expected]);
}

#[tokio::test]
async fn the_default_model_is_the_first_listed_unless_configured() {
    let fake = FakeHermes::start(Script::streaming(Vec::new()));
    let listed = connected(&fake).await;
    assert_eq!(listed.default_model().as_deref(), Some(HERMES_MODEL));
    let config = UpstreamConfig {
        model: Some("anthropic/claude-opus-4".to_owned()),
        ..fake.config()
    };
    let configured = HermesAgent::connect(config).await.unwrap();
    assert_eq!(
        configured.default_model().as_deref(),
        Some("anthropic/claude-opus-4")
    );
}
