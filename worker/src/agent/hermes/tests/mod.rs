//! Tests of the Hermes backend against a fake Hermes replaying recorded event streams: each
//! asserts the exact events a turn sees and the requests Hermes receives.

mod approvals;
mod connecting;
mod fake_hermes;
mod fake_routes;
mod fixtures;
mod runs;
mod stopping;
mod stream_failures;

use std::time::Duration;

use futures_util::stream::{BoxStream, StreamExt};

use self::fake_hermes::{FakeHermes, HERMES_MODEL};
use super::HermesAgent;
use crate::agent::{AgentEvent, TurnInput};

/// Longest a test waits for the backend: far above what it needs, far below a hang.
const PATIENCE: Duration = Duration::from_secs(2);

/// The backend connected to `fake` with the right key.
async fn connected(fake: &FakeHermes) -> HermesAgent {
    HermesAgent::connect(fake.config())
        .await
        .expect("connects to the fake Hermes")
}

/// A loopback URL nothing listens on (the port was free a moment ago).
fn unused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// A turn saying `text` with no history, in chat `chat-1`.
fn turn(text: &str) -> TurnInput {
    TurnInput {
        text: text.to_owned(),
        session_id: "chat-1".to_owned(),
        turn_key: "turn-1".to_owned(),
        ..TurnInput::default()
    }
}

/// The next event, failing the test if none comes in time.
async fn next_event(events: &mut BoxStream<'static, AgentEvent>) -> AgentEvent {
    tokio::time::timeout(PATIENCE, events.next())
        .await
        .expect("an event in time")
        .expect("the stream has not ended")
}

/// The `count` next events.
async fn next_events(events: &mut BoxStream<'static, AgentEvent>, count: usize) -> Vec<AgentEvent> {
    let mut taken = Vec::with_capacity(count);
    for _ in 0..count {
        taken.push(next_event(events).await);
    }
    taken
}

/// All remaining events, failing the test if the stream does not end in time.
async fn remaining_events(events: BoxStream<'static, AgentEvent>) -> Vec<AgentEvent> {
    tokio::time::timeout(PATIENCE, events.collect())
        .await
        .expect("the stream ends in time")
}

fn text(delta: &str) -> AgentEvent {
    AgentEvent::TextDelta(delta.to_owned())
}

/// `Done` as Hermes 0.19 reports it: its run status names the model `hermes-agent`.
fn done(tokens: u64) -> AgentEvent {
    AgentEvent::Done {
        model: Some(HERMES_MODEL.to_owned()),
        tokens: Some(tokens),
    }
}

/// The recorded `terminal` tool call starting with `preview`.
fn tool_started(preview: &str) -> AgentEvent {
    AgentEvent::ToolStarted {
        name: "terminal".to_owned(),
        preview: Some(preview.to_owned()),
        args: None,
    }
}

/// The recorded `terminal` tool call ending after `duration_secs`.
fn tool_completed(duration_secs: f64, ok: bool) -> AgentEvent {
    AgentEvent::ToolCompleted {
        name: "terminal".to_owned(),
        duration_secs: Some(duration_secs),
        ok,
        output_preview: None,
    }
}
