//! Event streams that go wrong: cut, closed early or silent, each ending the turn with one
//! `Failed`; and slow streams kept alive by keepalive comments, which must not.

use std::time::Duration;

use super::fake_hermes::Step::{Abort, Pause, Send};
use super::fake_hermes::{FakeHermes, Script};
use super::fixtures::{HELLO, KEEPALIVE, TICKS_BEFORE_STOP};
use super::{connected, done, remaining_events, text, turn};
use crate::agent::{Agent, AgentEvent};

/// Idle limit of these tests, standing for the real 90 s.
const IDLE_LIMIT: Duration = Duration::from_millis(400);

fn ticks_then(ending: &[AgentEvent]) -> Vec<AgentEvent> {
    let mut events = vec![text("tick0 "), text("tick1 "), text("tick2 ")];
    events.extend_from_slice(ending);
    events
}

#[tokio::test]
async fn a_stream_cut_mid_run_ends_the_turn_with_failed() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(TICKS_BEFORE_STOP), Abort]));
    let agent = connected(&fake).await;
    let mut events = remaining_events(agent.start(turn("be slow please")).events).await;
    let Some(AgentEvent::Failed(reason)) = events.pop() else {
        panic!("expected a failure last, got {events:?}");
    };
    assert!(
        reason.starts_with("lost the events of Hermes run run_fake0000: "),
        "{reason}"
    );
    assert_eq!(events, ticks_then(&[]));
}

#[tokio::test]
async fn a_stream_closed_before_the_run_ended_ends_the_turn_with_failed() {
    let fake = FakeHermes::start(Script::streaming(vec![Send(TICKS_BEFORE_STOP)]));
    let agent = connected(&fake).await;
    let events = remaining_events(agent.start(turn("be slow please")).events).await;
    let closed = AgentEvent::Failed(
        "Hermes closed the events of run run_fake0000 before the run ended".to_owned(),
    );
    assert_eq!(events, ticks_then(&[closed]));
}

#[tokio::test]
async fn a_silent_stream_fails_after_the_idle_limit() {
    let steps = vec![Send(TICKS_BEFORE_STOP), Pause(Duration::from_secs(2))];
    let fake = FakeHermes::start(Script::streaming(steps));
    let agent = connected(&fake).await.with_idle_limit(IDLE_LIMIT);
    let events = remaining_events(agent.start(turn("be slow please")).events).await;
    let silent = AgentEvent::Failed(
        "lost the events of Hermes run run_fake0000: no data for 400ms".to_owned(),
    );
    assert_eq!(events, ticks_then(&[silent]));
}

#[tokio::test]
async fn keepalive_comments_keep_a_slow_stream_alive_and_are_not_events() {
    // Six keepalives 100 ms apart: 600 ms in all, longer than the idle limit, so only the
    // keepalives keep the stream alive.
    let mut steps: Vec<_> = (0..6)
        .flat_map(|_| [Send(KEEPALIVE), Pause(Duration::from_millis(100))])
        .collect();
    steps.push(Send(HELLO));
    let fake = FakeHermes::start(Script::streaming(steps));
    let agent = connected(&fake).await.with_idle_limit(IDLE_LIMIT);
    let events = remaining_events(agent.start(turn("hello")).events).await;
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
