//! Stopping a run: at any point, the turn ends with `Cancelled` (or how the run really ended),
//! and a turn that goes away stops its run too.

use std::time::Duration;

use super::fake_hermes::Step::{AwaitStop, Send};
use super::fake_hermes::{FakeHermes, Script};
use super::fixtures::{
    HELLO, SLOW_TOOL_AFTER_STOP, SLOW_TOOL_BEFORE_STOP, TICKS_AFTER_STOP, TICKS_BEFORE_STOP,
};
use super::{
    connected, next_event, next_events, remaining_events, text, tool_completed, tool_started, turn,
    PATIENCE,
};
use crate::agent::{Agent, AgentEvent};

const STOP_PATH: &str = "/v1/runs/run_fake0000/stop";

fn stoppable(before: &'static str, after: &'static str) -> Script {
    Script::streaming(vec![Send(before), AwaitStop, Send(after)])
}

#[tokio::test]
async fn stopping_mid_answer_posts_stop_and_ends_with_cancelled() {
    let fake = FakeHermes::start(stoppable(TICKS_BEFORE_STOP, TICKS_AFTER_STOP));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("be slow please"));
    let streamed = next_events(&mut run.events, 3).await;
    assert_eq!(streamed, [text("tick0 "), text("tick1 "), text("tick2 ")]);

    run.control.stop().await.unwrap();

    assert_eq!(fake.posted(STOP_PATH).len(), 1);
    assert_eq!(remaining_events(run.events).await, [AgentEvent::Cancelled]);
}

#[tokio::test]
async fn stopping_mid_tool_reports_the_interrupted_tool_then_cancelled() {
    let fake = FakeHermes::start(stoppable(SLOW_TOOL_BEFORE_STOP, SLOW_TOOL_AFTER_STOP));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("slow tool please"));
    assert_eq!(next_event(&mut run.events).await, tool_started("sleep 20"));

    run.control.stop().await.unwrap();

    let expected = [tool_completed(2.432, false), AgentEvent::Cancelled];
    assert_eq!(remaining_events(run.events).await, expected);
}

#[tokio::test]
async fn stopping_right_after_start_waits_for_the_run_id_then_stops() {
    let fake = FakeHermes::start(stoppable(TICKS_BEFORE_STOP, TICKS_AFTER_STOP));
    let agent = connected(&fake).await;
    let run = agent.start(turn("be slow please"));

    run.control.stop().await.unwrap();

    assert_eq!(fake.posted(STOP_PATH).len(), 1);
    let expected = [
        text("tick0 "),
        text("tick1 "),
        text("tick2 "),
        AgentEvent::Cancelled,
    ];
    assert_eq!(remaining_events(run.events).await, expected);
}

#[tokio::test]
async fn stopping_a_finished_run_is_ok_and_changes_nothing() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(HELLO)]));
    let agent = connected(&fake).await;
    let run = agent.start(turn("hello"));
    let events = remaining_events(run.events).await;
    assert!(matches!(events.last(), Some(AgentEvent::Done { .. })));

    // Hermes answers 404 for a finished run; the turn already knows how it ended.
    run.control.stop().await.unwrap();

    assert_eq!(fake.posted(STOP_PATH).len(), 1);
}

#[tokio::test]
async fn stopping_a_refused_run_is_ok_without_asking_hermes() {
    let fake = FakeHermes::start(Script::refusing(429, r#"{"error": {"message": "busy"}}"#));
    let agent = connected(&fake).await;
    let run = agent.start(turn("hello"));

    run.control.stop().await.unwrap();

    assert!(matches!(
        remaining_events(run.events).await.as_slice(),
        [AgentEvent::Failed(_)]
    ));
    assert!(fake.posted(STOP_PATH).is_empty());
}

#[tokio::test]
async fn dropping_the_events_mid_run_stops_the_upstream_run() {
    let fake = FakeHermes::start(stoppable(TICKS_BEFORE_STOP, TICKS_AFTER_STOP));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("be slow please"));
    next_event(&mut run.events).await;

    drop(run.events);

    let deadline = tokio::time::Instant::now() + PATIENCE;
    while fake.posted(STOP_PATH).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no stop reached Hermes"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
