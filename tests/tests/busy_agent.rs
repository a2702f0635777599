//! A user's message never waits behind the agent: with a slow agent, messages sent while a
//! turn runs are shown at once on every device, queued, and answered in order, each once;
//! a message sent while no worker runs is shown at once and answered when one starts; a
//! worker killed with messages queued leaves them to the next owner, which answers each
//! once.

use serde_json::Value;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, type_of};
use iris_tests::turn::{is_stop_answering, is_user_message, recv_through_answer};

/// Long enough for five chunks of the echo agent: with 300 ms between chunks a turn takes
/// about 1.5 s.
fn slow_text(label: &str) -> String {
    format!("{label}: a question the agent answers slowly, chunk after chunk, for a while")
}

fn position(frames: &[Value], what: &str, found: impl Fn(&Value) -> bool) -> usize {
    frames
        .iter()
        .position(found)
        .unwrap_or_else(|| panic!("no {what} among {frames:#?}"))
}

fn user_message_id<'a>(frames: &'a [Value], text: &str) -> &'a str {
    let at = position(frames, "user message", |f| is_user_message(f, text));
    payload_str(&frames[at], "message_id").expect("a user message has an id")
}

fn stops(frames: &[Value]) -> Vec<&Value> {
    frames
        .iter()
        .filter(|frame| type_of(frame) == "message.stop")
        .collect()
}

/// Proves that the second and third message of a chat, sent while its first turn streams,
/// reach the sender (with their request ids) and the account's other device before that
/// turn ends, that `agent.busy` names the message being answered and the queue in order,
/// and that the three are answered one after another, in order, each once.
#[tokio::test]
async fn messages_sent_during_a_turn_are_shown_at_once_and_answered_in_order_each_once() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "300");
    let cluster = Cluster::start("busy-queue", spec).await;
    let token = cluster.create_token("quinn");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;

    let (first, second, third) = (slow_text("first"), slow_text("second"), slow_text("third"));
    phone.send_message(&first).await;
    let mut on_phone = phone.recv_until("message.start").await;
    let second_id = phone.send_message(&second).await;
    let third_id = phone.send_message(&third).await;
    recv_through_answer(&mut phone, &third, &mut on_phone).await;
    let mut on_tablet = Vec::new();
    recv_through_answer(&mut tablet, &third, &mut on_tablet).await;

    for (device, frames) in [("phone", &on_phone), ("tablet", &on_tablet)] {
        let first_stop = position(frames, "first answer", |f| is_stop_answering(f, &first));
        for (text, request_id) in [(&second, second_id), (&third, third_id)] {
            let shown = position(frames, "queued message", |f| is_user_message(f, text));
            assert!(
                shown < first_stop,
                "[{device}] {text:?} shown only after the running turn ended: {frames:#?}"
            );
            let expected_id = (device == "phone").then_some(request_id);
            assert_eq!(id_of(&frames[shown]), expected_id, "[{device}] echo id");
        }
        let answering = user_message_id(frames, &first);
        let queue_of_two = position(frames, "busy naming the queue", |f| {
            type_of(f) == "agent.busy" && f["payload"]["queued"].as_array().map(Vec::len) == Some(2)
        });
        let busy = &frames[queue_of_two]["payload"];
        assert_eq!(busy["message_id"], answering, "[{device}] busy: {busy}");
        assert_eq!(
            busy["queued"],
            serde_json::json!([
                user_message_id(frames, &second),
                user_message_id(frames, &third)
            ]),
            "[{device}] the queue in the order sent"
        );
        let answers: Vec<&Value> = stops(frames);
        assert_eq!(answers.len(), 3, "[{device}] one answer each: {answers:#?}");
        for (answer, text) in answers.iter().zip([&first, &second, &third]) {
            assert!(
                is_stop_answering(answer, text),
                "[{device}] answers out of order: {answers:#?}"
            );
        }
    }
}

/// Proves that a message sent while no worker runs is echoed to the sender and shown on
/// the other device at once, with `agent.busy {unavailable: true}`, and is answered once
/// as soon as a worker starts.
#[tokio::test]
async fn a_message_sent_while_no_worker_runs_is_shown_at_once_and_answered_when_one_starts() {
    let spec = ClusterSpec::default().gateways(2).workers(0);
    let mut cluster = Cluster::start("no-worker", spec).await;
    let token = cluster.create_token("nadia");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;

    let text = "is anybody there?";
    let request_id = phone.send_message(text).await;
    for (device, client, expected_id) in [
        ("phone", &mut phone, Some(request_id)),
        ("tablet", &mut tablet, None),
    ] {
        let shown = client.recv().await;
        assert!(is_user_message(&shown, text), "[{device}] first: {shown}");
        assert_eq!(id_of(&shown), expected_id, "[{device}] echo id");
        let busy = client.recv().await;
        assert_eq!(type_of(&busy), "agent.busy", "[{device}] then: {busy}");
        assert_eq!(busy["payload"]["unavailable"], true, "[{device}] {busy}");
    }

    cluster.add_worker().await;
    for (device, client) in [("phone", &mut phone), ("tablet", &mut tablet)] {
        let mut frames = Vec::new();
        recv_through_answer(client, text, &mut frames).await;
        assert!(
            !frames.iter().any(|f| is_user_message(f, text)),
            "[{device}] the message shown twice: {frames:#?}"
        );
        assert_eq!(
            stops(&frames).len(),
            1,
            "[{device}] answered once: {frames:#?}"
        );
        let busy = position(&frames, "busy", |f| type_of(f) == "agent.busy");
        assert!(
            frames[busy]["payload"]["unavailable"].is_null(),
            "[{device}] the worker's busy is not unavailable: {frames:#?}"
        );
    }
}

/// Proves that when the worker running a chat is killed with one turn streaming and two
/// messages queued, the next owner answers all three, in order, each with one
/// `message.stop` and none of them interrupted (the echo agent starts no tools, so the
/// begun turn is run again).
#[tokio::test]
async fn a_worker_killed_with_messages_queued_leaves_each_answered_once_by_the_next_owner() {
    let spec = ClusterSpec::default()
        .workers(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "300");
    let mut cluster = Cluster::start("busy-failover", spec).await;
    let token = cluster.create_token("kim");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let texts = [slow_text("one"), slow_text("two"), slow_text("three")];
    phone.send_message(&texts[0]).await;
    let mut frames = phone.recv_until("message.update").await;
    phone.send_message(&texts[1]).await;
    phone.send_message(&texts[2]).await;
    let partition = iris_shared::partition::partition_of(
        "kim",
        iris_shared::protocol::DEFAULT_CHAT_ID,
        cluster.partitions(),
    );
    let owner = cluster
        .lease_holder(partition)
        .and_then(|node| cluster.worker_index(&node))
        .expect("a worker owns the chat");
    // Both queued messages are shown before the kill.
    for text in &texts[1..] {
        while !frames.iter().any(|f| is_user_message(f, text)) {
            frames.push(phone.recv().await);
        }
    }
    cluster.kill_worker(owner);

    recv_through_answer(&mut phone, &texts[2], &mut frames).await;
    let answers = stops(&frames);
    assert_eq!(answers.len(), 3, "one answer each: {answers:#?}");
    for (answer, text) in answers.iter().zip(&texts) {
        assert!(is_stop_answering(answer, text), "in order: {answers:#?}");
        assert!(answer["payload"]["interrupted"].is_null(), "{answer}");
    }
    assert!(
        !frames.iter().any(|f| type_of(f) == "error"),
        "no turn ended in an error: {frames:#?}"
    );
}

/// Proves that in a chat switched to `/busy interrupt`, a message sent while a turn streams
/// stops that turn (its `message.stop` carries only the partial answer, then `agent.idle`)
/// and is answered next, once; `/busy` with no argument reports the chat's choice.
#[tokio::test]
async fn in_an_interrupt_chat_a_new_message_stops_the_running_turn_and_is_answered_next() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "300");
    let cluster = Cluster::start("busy-interrupt", spec).await;
    let token = cluster.create_token("ines");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.send_message("/busy interrupt").await;
    let reply = phone
        .recv_until_match("message", |f| payload_str(f, "role") == Some("system"))
        .await;
    let reply = reply.last().expect("a reply");
    assert!(
        payload_str(reply, "text").is_some_and(|t| t.contains("interrupt")),
        "{reply}"
    );

    let (first, second) = (slow_text("first"), slow_text("second"));
    phone.send_message(&first).await;
    let mut frames = phone.recv_until("message.update").await;
    phone.send_message(&second).await;
    recv_through_answer(&mut phone, &second, &mut frames).await;
    let answers = stops(&frames);
    assert_eq!(answers.len(), 2, "{answers:#?}");
    let partial = payload_str(answers[0], "final_text").unwrap_or_default();
    let whole_first = format!("echo: {first}");
    assert!(
        whole_first.starts_with(partial) && partial.len() < whole_first.len(),
        "the first turn ends with its partial answer, not the whole: {partial:?}"
    );
    assert!(is_stop_answering(answers[1], &second), "{answers:#?}");
    let first_stop = position(&frames, "first stop", |f| std::ptr::eq(f, answers[0]));
    assert_eq!(
        type_of(&frames[first_stop + 1]),
        "agent.idle",
        "the interrupted turn ends visibly: {frames:#?}"
    );

    phone.send_message("/busy").await;
    let shown = phone
        .recv_until_match("message", |f| payload_str(f, "role") == Some("system"))
        .await;
    let shown = shown.last().expect("a reply");
    assert!(
        payload_str(shown, "text").is_some_and(|t| t.contains("interrupt (this chat's)")),
        "{shown}"
    );
}

/// Proves that with `IRIS_BUSY_POLICY=steer` and an agent that cannot be steered (the echo
/// agent), a message sent during a turn is queued, every device is told so by a
/// `notification`, and it is answered after the running turn, once.
#[tokio::test]
async fn with_the_steer_policy_a_message_the_agent_cannot_take_mid_turn_is_queued_and_said_so() {
    let spec = ClusterSpec::default()
        .gateways(2)
        .worker_env("IRIS_ECHO_DELAY_MS", "300")
        .worker_env("IRIS_BUSY_POLICY", "steer");
    let cluster = Cluster::start("busy-steer", spec).await;
    let token = cluster.create_token("sam");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    tablet.pair(&token, "tablet-1").await;

    let (first, second) = (slow_text("first"), slow_text("second"));
    phone.send_message(&first).await;
    let mut on_phone = phone.recv_until("message.update").await;
    phone.send_message(&second).await;
    recv_through_answer(&mut phone, &second, &mut on_phone).await;
    let mut on_tablet = Vec::new();
    recv_through_answer(&mut tablet, &second, &mut on_tablet).await;
    for (device, frames) in [("phone", &on_phone), ("tablet", &on_tablet)] {
        let first_stop = position(frames, "first answer", |f| is_stop_answering(f, &first));
        let notice = position(frames, "queued notice", |f| {
            type_of(f) == "notification"
                && payload_str(f, "title").is_some_and(|t| t.starts_with("Queued"))
        });
        assert!(
            notice < first_stop,
            "[{device}] told during the turn: {frames:#?}"
        );
        let answers = stops(frames);
        assert_eq!(answers.len(), 2, "[{device}] {answers:#?}");
        assert!(
            is_stop_answering(answers[0], &first),
            "[{device}] {answers:#?}"
        );
        assert!(
            is_stop_answering(answers[1], &second),
            "[{device}] {answers:#?}"
        );
    }
}
