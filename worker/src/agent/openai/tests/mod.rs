//! Behaviour of the `openai` backend against a scripted OpenAI-compatible server (one
//! file per topic), and the helpers those tests share.

mod fake_upstream;
mod fixtures;

mod connecting;
mod controls;
mod failures;
mod requests;
mod streamed_answers;

use futures_util::StreamExt;

use self::fake_upstream::{FakeUpstream, Recorded, Reply, Step};
use self::fixtures::{model_list, FAKE_MODEL};
use crate::agent::{Agent, AgentError, AgentEvent, OpenAiAgent, TurnInput, UpstreamConfig};

/// A server that lists [`FAKE_MODEL`] and answers chat completions with `chat`.
async fn upstream(chat: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> FakeUpstream {
    FakeUpstream::start(move |request| match request.path.as_str() {
        "/v1/models" => model_list(&[FAKE_MODEL]),
        _ => chat(request),
    })
    .await
}

/// A server streaming `steps` for every chat completion.
async fn streaming(steps: fn() -> Vec<Step>) -> FakeUpstream {
    upstream(move |_| Reply::Stream(steps())).await
}

fn config_for(upstream: &FakeUpstream) -> UpstreamConfig {
    UpstreamConfig {
        url: upstream.url.clone(),
        ..Default::default()
    }
}

async fn connect(upstream: &FakeUpstream) -> OpenAiAgent {
    OpenAiAgent::connect(config_for(upstream)).await.unwrap()
}

fn user_says(text: &str) -> TurnInput {
    TurnInput {
        text: text.into(),
        ..Default::default()
    }
}

async fn turn_events(agent: &OpenAiAgent, input: TurnInput) -> Vec<AgentEvent> {
    agent.start(input).events.collect().await
}

fn text(delta: &str) -> AgentEvent {
    AgentEvent::TextDelta(delta.into())
}

fn reasoning(delta: &str) -> AgentEvent {
    AgentEvent::ReasoningDelta(delta.into())
}

fn done(model: &str, tokens: u64) -> AgentEvent {
    AgentEvent::Done {
        model: Some(model.into()),
        tokens: Some(tokens),
    }
}

fn upstream_error_of(result: Result<OpenAiAgent, AgentError>) -> String {
    match result {
        Err(AgentError::Upstream(message)) => message,
        Err(other) => panic!("expected an upstream error, got {other:?}"),
        Ok(_) => panic!("expected connecting to fail"),
    }
}
