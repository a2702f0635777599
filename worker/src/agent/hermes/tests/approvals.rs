//! Approvals: the request reaches the turn with a stable id, the answer reaches Hermes as
//! one of its choices, and the run goes on.

use serde_json::json;

use super::fake_hermes::Step::{AwaitApproval, Send};
use super::fake_hermes::{FakeHermes, Script, RUN_ID};
use super::fixtures::{
    DENY_AFTER_APPROVAL, DENY_BEFORE_APPROVAL, ONCE_AFTER_APPROVAL, ONCE_BEFORE_APPROVAL,
};
use super::{
    connected, done, next_events, remaining_events, text, tool_completed, tool_started, turn,
};
use crate::agent::{Agent, AgentError, AgentEvent};

const APPROVAL_PATH: &str = "/v1/runs/run_fake0000/approval";

/// The recorded request to approve `rm -rf $LAB/scratch`, as the run's first approval.
fn rm_rf_approval() -> AgentEvent {
    AgentEvent::ApprovalRequested {
        approval_id: format!("{RUN_ID}:1"),
        command: "rm -rf $LAB/scratch".to_owned(),
        description: "delete in root path".to_owned(),
        choices: ["once", "session", "always", "deny"]
            .map(str::to_owned)
            .to_vec(),
    }
}

fn resolved(choice: &str) -> AgentEvent {
    AgentEvent::ApprovalResolved {
        choice: choice.to_owned(),
    }
}

fn approval_script(before: &'static str, after: &'static str) -> Script {
    Script::streaming(vec![Send(before), AwaitApproval, Send(after)])
}

#[tokio::test]
async fn an_approved_command_is_answered_once_and_the_run_goes_on() {
    let fake = FakeHermes::start(approval_script(ONCE_BEFORE_APPROVAL, ONCE_AFTER_APPROVAL));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("do something dangerous"));
    let asked = next_events(&mut run.events, 2).await;
    assert_eq!(
        asked,
        [tool_started("rm -rf $LAB/scratch"), rm_rf_approval()]
    );

    run.control
        .approve(&format!("{RUN_ID}:1"), "approve")
        .await
        .unwrap();

    assert_eq!(fake.posted(APPROVAL_PATH), vec![json!({"choice": "once"})]);
    let expected = [
        resolved("once"),
        tool_completed(0.519, true),
        text("\n\nTool "),
        text("result "),
        text("received: "),
        text(
            r#"{"output": "", "exit_code": 0, "error": null, "approval": "Command required approval (delete in root path) and was approved by the user."}"#,
        ),
        done(220),
    ];
    assert_eq!(remaining_events(run.events).await, expected);
}

#[tokio::test]
async fn a_denied_command_is_answered_deny_and_the_run_completes_blocked() {
    let fake = FakeHermes::start(approval_script(DENY_BEFORE_APPROVAL, DENY_AFTER_APPROVAL));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("do something dangerous"));
    let asked = next_events(&mut run.events, 2).await;
    assert_eq!(
        asked,
        [tool_started("rm -rf $LAB/scratch"), rm_rf_approval()]
    );

    run.control
        .approve(&format!("{RUN_ID}:1"), "no")
        .await
        .unwrap();

    assert_eq!(fake.posted(APPROVAL_PATH), vec![json!({"choice": "deny"})]);
    let expected = [
        resolved("deny"),
        tool_completed(0.374, false),
        text("\n\nTool "),
        text("result "),
        text("received: "),
        text(
            r#"{"output": "", "exit_code": -1, "error": "BLOCKED: Command denied by user. The user has NOT consented to this action. Do NOT retry this command, do NOT rephrase it, and do NOT attempt the same outcome"#,
        ),
        done(220),
    ];
    assert_eq!(remaining_events(run.events).await, expected);
}

#[tokio::test]
async fn an_approval_id_that_is_not_pending_is_refused_without_asking_hermes() {
    let fake = FakeHermes::start(approval_script(ONCE_BEFORE_APPROVAL, ONCE_AFTER_APPROVAL));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("do something dangerous"));
    next_events(&mut run.events, 2).await;

    let err = run
        .control
        .approve(&format!("{RUN_ID}:2"), "once")
        .await
        .unwrap_err();

    assert_eq!(
        err,
        AgentError::NotActive(format!("approval {RUN_ID}:2 is not pending"))
    );
    assert!(fake.posted(APPROVAL_PATH).is_empty());
}

#[tokio::test]
async fn a_choice_hermes_refuses_is_not_active_with_hermes_message() {
    let fake = FakeHermes::start(approval_script(ONCE_BEFORE_APPROVAL, ONCE_AFTER_APPROVAL));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("do something dangerous"));
    next_events(&mut run.events, 2).await;

    let err = run
        .control
        .approve(&format!("{RUN_ID}:1"), "maybe")
        .await
        .unwrap_err();

    let message = "Invalid approval choice; expected one of: once, session, always, deny";
    assert_eq!(err, AgentError::NotActive(message.to_owned()));
    assert_eq!(fake.posted(APPROVAL_PATH), vec![json!({"choice": "maybe"})]);
}

#[tokio::test]
async fn an_answered_approval_is_no_longer_pending() {
    let fake = FakeHermes::start(approval_script(ONCE_BEFORE_APPROVAL, ONCE_AFTER_APPROVAL));
    let agent = connected(&fake).await;
    let mut run = agent.start(turn("do something dangerous"));
    next_events(&mut run.events, 2).await;
    let approval_id = format!("{RUN_ID}:1");
    run.control.approve(&approval_id, "once").await.unwrap();
    remaining_events(run.events).await;

    let err = run.control.approve(&approval_id, "once").await.unwrap_err();

    assert!(matches!(err, AgentError::NotActive(_)), "{err:?}");
    assert_eq!(fake.posted(APPROVAL_PATH).len(), 1);
}
