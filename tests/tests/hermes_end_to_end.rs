//! Turns run by a real Hermes Agent 0.19 API server (with the scripted fake LLM behind it)
//! through the worker's `hermes` backend, as devices see them over WebSockets: plain
//! answers, tool calls, approvals denied and granted (from one or two devices), and stop.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use iris_tests::client::{Client, DEFAULT_CHAT};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, of_type, payload_str, type_of, types_of};
use iris_tests::hermes_upstream::{HermesUpstream, LISTED_FILES, PLAIN_ANSWER, TOOL_ANSWER_PREFIX};
use iris_tests::turn::{assert_turn_in_order, is_user_message};

/// How long a device waits for each frame: Hermes' first run takes a few seconds.
const HERMES_RECV_TIMEOUT: Duration = Duration::from_secs(30);
/// What the fake LLM answers in chunks.
const PLAIN_PROMPT: &str = "hello there";
/// What makes the fake LLM call the terminal tool with `ls`.
const LS_PROMPT: &str = "please run ls";
/// What makes the fake LLM call `rm -rf`, which Hermes asks the user to approve.
const DANGEROUS_PROMPT: &str = "do something dangerous";
/// What makes the fake LLM stream one chunk a second for twenty seconds.
const SLOW_PROMPT: &str = "be slow please";
/// How soon after `agent.stop` the turn must be over.
const STOP_DEADLINE: Duration = Duration::from_secs(5);

/// A Hermes upstream and a cluster whose workers run their turns on it.
struct HermesCluster {
    cluster: Cluster,
    /// Declared last: Hermes outlives the cluster, whose workers talk to it.
    hermes: HermesUpstream,
}

impl HermesCluster {
    /// Starts Hermes, then a cluster of `gateways` gateways and one `IRIS_AGENT=hermes` worker.
    async fn start(label: &str, gateways: usize) -> Self {
        let hermes = HermesUpstream::start(label).await;
        let spec = hermes.workers_of(ClusterSpec::default().gateways(gateways));
        let cluster = Cluster::start(label, spec).await;
        Self { cluster, hermes }
    }

    /// A device of account `alice` paired on gateway `gateway`.
    async fn device(&self, gateway: usize, name: &str) -> Client {
        let token = self.cluster.create_token("alice");
        let mut device = self.cluster.connect(gateway, name).await;
        device.set_recv_timeout(HERMES_RECV_TIMEOUT);
        device.pair(&token, &format!("{name}-1")).await;
        device
    }
}

/// The payload of `frame`.
fn payload(frame: &Value) -> &Value {
    &frame["payload"]
}

/// Index of the first frame of type `type_name` at or after `from`.
fn index_of(frames: &[Value], type_name: &str, from: usize) -> Option<usize> {
    frames
        .iter()
        .skip(from)
        .position(|frame| type_of(frame) == type_name)
        .map(|offset| from + offset)
}

/// Asserts that frames of the listed types occur in `frames` in this order (others may be
/// in between); returns their indices.
fn assert_in_order(device: &str, frames: &[Value], types: &[&str]) -> Vec<usize> {
    let mut indices = Vec::new();
    let mut from = 0;
    for type_name in types {
        let Some(index) = index_of(frames, type_name, from) else {
            panic!(
                "[{device}] no {type_name} after {:?} in {:?}; frames: {frames:#?}",
                &types[..indices.len()],
                types_of(frames)
            );
        };
        indices.push(index);
        from = index + 1;
    }
    indices
}

/// The last `message.stop` of a turn (the final answer).
fn final_stop<'a>(device: &str, frames: &'a [Value]) -> &'a Value {
    of_type(frames, "message.stop")
        .last()
        .copied()
        .unwrap_or_else(|| panic!("[{device}] no message.stop; frames: {frames:#?}"))
}

/// The final text of the turn's last `message.stop`.
fn final_text<'a>(device: &str, frames: &'a [Value]) -> &'a str {
    let stop = final_stop(device, frames);
    payload_str(stop, "final_text")
        .unwrap_or_else(|| panic!("[{device}] message.stop without final_text: {stop:#}"))
}

/// The only frame of type `type_name`.
fn only<'a>(device: &str, frames: &'a [Value], type_name: &str) -> &'a Value {
    let found = of_type(frames, type_name);
    assert_eq!(
        found.len(),
        1,
        "[{device}] expected exactly one {type_name}; frames: {frames:#?}"
    );
    found[0]
}

/// Sends `message.send` with `text`, checks the user's message echoes it with the request
/// id, and returns the frames up to and including `until` (a frame type).
async fn send_and_read_until(
    device: &mut Client,
    name: &str,
    text: &str,
    until: &str,
) -> Vec<Value> {
    let request_id = device.send_message(text).await;
    let frames = device.recv_until(until).await;
    let user = frames
        .iter()
        .find(|frame| is_user_message(frame, text))
        .unwrap_or_else(|| panic!("[{name}] no user message {text:?}; frames: {frames:#?}"));
    assert_eq!(
        id_of(user),
        Some(request_id),
        "[{name}] user message without the request id: {user}"
    );
    frames
}

/// Asserts `frames` show the dangerous command's approval: one `picker.approval` naming the
/// `rm -rf` command and why, and a `notification` of kind `approval`. Returns the picker id.
fn assert_approval_asked(device: &str, frames: &[Value]) -> String {
    let picker = only(device, frames, "picker.approval");
    let command = payload_str(picker, "command").unwrap_or_default();
    assert!(
        command.contains("rm -rf") && command.contains("doomed"),
        "[{device}] picker.approval does not show the rm -rf command: {picker:#}"
    );
    assert!(
        payload_str(picker, "description").is_some_and(|text| !text.is_empty()),
        "[{device}] picker.approval without a description: {picker:#}"
    );
    let notified = of_type(frames, "notification")
        .iter()
        .any(|frame| payload_str(frame, "kind") == Some("approval"));
    assert!(
        notified,
        "[{device}] no notification of kind approval; frames: {frames:#?}"
    );
    payload_str(picker, "picker_id")
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| panic!("[{device}] picker.approval without picker_id: {picker:#}"))
        .to_owned()
}

/// Answers approval `picker_id` with `value` (once, session, always, deny).
async fn answer_approval(device: &mut Client, picker_id: &str, value: &str) {
    device
        .request(
            "picker.select",
            Some(DEFAULT_CHAT),
            json!({ "picker_id": picker_id, "value": value }),
        )
        .await;
}

/// Asserts the rest of an approved-or-denied turn: the terminal tool ends (`ok` as given),
/// then the final answer quotes the tool result, then `agent.idle`. Returns the final text.
fn assert_tool_turn_finished<'a>(device: &str, frames: &'a [Value], ok: bool) -> &'a str {
    assert_in_order(device, frames, &["tool.end", "message.stop", "agent.idle"]);
    let end = only(device, frames, "tool.end");
    assert_eq!(
        payload(end)["index"],
        json!(0),
        "[{device}] tool.end index: {end:#}"
    );
    assert_eq!(
        payload(end)["ok"],
        json!(ok),
        "[{device}] tool.end ok: {end:#}"
    );
    let text = final_text(device, frames);
    assert!(
        text.contains(TOOL_ANSWER_PREFIX.trim_end()),
        "[{device}] the final answer does not quote the tool result: {text:?}"
    );
    text
}

/// Proves the fixture alone works: the Hermes API server started by the harness runs a turn
/// on the fake LLM over its own runs API (`POST /v1/runs`, then the run's SSE events), so a
/// failure of the tests below lies in the cluster, not in Hermes or its setup.
#[tokio::test]
async fn the_hermes_fixture_answers_a_run_with_the_fake_llm_without_the_cluster() {
    let hermes = HermesUpstream::start("hermes-fixture").await;
    let run_id = hermes.start_run(PLAIN_PROMPT).await;
    let events = hermes.run_events(&run_id).await;
    let names: Vec<&str> = events
        .iter()
        .map(|event| event["event"].as_str().unwrap_or_default())
        .collect();
    assert!(
        names.contains(&"message.delta"),
        "no message.delta: {events:#?}"
    );
    let completed = events
        .iter()
        .find(|event| event["event"] == "run.completed")
        .unwrap_or_else(|| panic!("no run.completed: {events:#?}"));
    assert_eq!(completed["output"], json!(PLAIN_ANSWER), "{completed:#}");
}

/// Proves a plain message is answered by Hermes as one streamed turn: the user's message
/// (with the request id), `agent.busy`, `message.start`, at least one `message.update` whose
/// text grows towards the answer, `message.stop` whose final text is exactly the fake LLM's
/// answer (and whose reasoning, if any, is not a copy of it), then `agent.idle`.
#[tokio::test]
async fn a_plain_message_is_answered_by_hermes_as_one_streamed_turn() {
    let setup = HermesCluster::start("hermes-plain", 1).await;
    let mut phone = setup.device(0, "phone").await;

    let frames = send_and_read_until(&mut phone, "phone", PLAIN_PROMPT, "agent.idle").await;

    assert_turn_in_order("phone", &frames, 1);

    let text = final_text("phone", &frames);
    assert_eq!(text.trim(), PLAIN_ANSWER, "frames: {frames:#?}");
    for update in of_type(&frames, "message.update") {
        let partial = payload_str(update, "text").unwrap_or_default();
        assert!(
            text.starts_with(partial),
            "message.update text {partial:?} is not a prefix of the answer {text:?}"
        );
    }
    let stop = final_stop("phone", &frames);
    assert_ne!(
        payload_str(stop, "reasoning").map(str::trim),
        Some(PLAIN_ANSWER),
        "Hermes' reasoning.available carries the answer, not reasoning: {stop:#}"
    );
}

/// Proves a Hermes tool call reaches the device: "run ls" yields `tool.start` (index 0, the
/// terminal tool, a preview showing `ls`), `tool.end` (index 0, ok), then a final answer
/// that quotes the tool's real output (the files of Hermes' terminal folder), and `agent.idle`.
#[tokio::test]
async fn a_hermes_tool_call_is_shown_as_tool_start_and_end_then_the_answer_quoting_its_output() {
    let setup = HermesCluster::start("hermes-tool", 1).await;
    let mut phone = setup.device(0, "phone").await;

    let frames = send_and_read_until(&mut phone, "phone", LS_PROMPT, "agent.idle").await;

    assert_in_order(
        "phone",
        &frames,
        &[
            "agent.busy",
            "tool.start",
            "tool.end",
            "message.stop",
            "agent.idle",
        ],
    );
    let start = only("phone", &frames, "tool.start");
    assert_eq!(payload(start)["index"], json!(0), "{start:#}");
    assert_eq!(payload_str(start, "name"), Some("terminal"), "{start:#}");
    assert!(
        payload_str(start, "preview").is_some_and(|preview| preview.contains("ls")),
        "tool.start preview does not show ls: {start:#}"
    );
    let text = assert_tool_turn_finished("phone", &frames, true);
    for file in LISTED_FILES {
        assert!(
            text.contains(file),
            "the answer does not list {file}: {text:?}"
        );
    }
}

/// Proves a denied approval: "dangerous" makes Hermes ask before `rm -rf`, the device gets
/// a `picker.approval` (command, description, picker id) and an approval `notification`;
/// answering `deny` lets the turn finish (`tool.end` not ok, a final answer quoting the
/// BLOCKED tool result, `agent.idle`) and the folder is still there.
#[tokio::test]
async fn a_denied_hermes_approval_blocks_the_command_and_the_turn_still_finishes() {
    let setup = HermesCluster::start("hermes-deny", 1).await;
    let mut phone = setup.device(0, "phone").await;

    let mut frames =
        send_and_read_until(&mut phone, "phone", DANGEROUS_PROMPT, "picker.approval").await;
    let picker_id = picker_id_when_asked(&mut phone, "phone", &mut frames).await;
    answer_approval(&mut phone, &picker_id, "deny").await;
    frames.extend(phone.collect_turn().await);

    let text = assert_tool_turn_finished("phone", &frames, false);
    assert!(
        text.contains("BLOCKED"),
        "the answer does not quote the block: {text:?}"
    );
    assert!(
        setup.hermes.doomed_dir().is_dir(),
        "the denied rm -rf ran anyway"
    );
}

/// Proves an approval granted once: answering `once` to the `picker.approval` of
/// "dangerous" lets Hermes run the `rm -rf` (the folder is gone), `tool.end` is ok, and the
/// turn finishes with the answer and `agent.idle`.
#[tokio::test]
async fn an_approval_granted_once_runs_the_command_and_the_turn_finishes() {
    let setup = HermesCluster::start("hermes-once", 1).await;
    let mut phone = setup.device(0, "phone").await;

    let mut frames =
        send_and_read_until(&mut phone, "phone", DANGEROUS_PROMPT, "picker.approval").await;
    let picker_id = picker_id_when_asked(&mut phone, "phone", &mut frames).await;
    answer_approval(&mut phone, &picker_id, "once").await;
    frames.extend(phone.collect_turn().await);

    assert_tool_turn_finished("phone", &frames, true);
    assert!(
        !setup.hermes.doomed_dir().exists(),
        "the approved rm -rf did not run"
    );
}

/// The picker id of the `picker.approval` at the end of `frames`, once the approval
/// `notification` has arrived too (it may come just after the picker; read frames are kept).
async fn picker_id_when_asked(device: &mut Client, name: &str, frames: &mut Vec<Value>) -> String {
    let notified = |frames: &[Value]| {
        of_type(frames, "notification")
            .iter()
            .any(|frame| payload_str(frame, "kind") == Some("approval"))
    };
    if !notified(frames) {
        frames.extend(
            device
                .recv_until_match("notification", |frame| {
                    payload_str(frame, "kind") == Some("approval")
                })
                .await,
        );
    }
    assert_approval_asked(name, frames)
}

/// Proves `agent.stop` stops a Hermes turn mid-stream: after the first `message.update` of
/// the slow answer the device sends `agent.stop`, and within a few seconds the turn ends
/// with `message.stop` carrying the partial text (not the whole twenty chunks) and `agent.idle`
/// answering the `agent.stop`.
#[tokio::test]
async fn agent_stop_ends_a_streaming_hermes_turn_with_the_partial_text() {
    let setup = HermesCluster::start("hermes-stop", 1).await;
    let mut phone = setup.device(0, "phone").await;

    let mut frames = send_and_read_until(&mut phone, "phone", SLOW_PROMPT, "message.update").await;
    let stop_id = phone
        .request("agent.stop", Some(DEFAULT_CHAT), json!({}))
        .await;
    let stopped_at = Instant::now();
    frames.extend(phone.collect_turn().await);
    let took = stopped_at.elapsed();

    assert!(
        took < STOP_DEADLINE,
        "the turn took {took:?} to end after agent.stop"
    );
    assert_in_order(
        "phone",
        &frames,
        &[
            "message.start",
            "message.update",
            "message.stop",
            "agent.idle",
        ],
    );
    let idle = frames.last().expect("collect_turn ends with agent.idle");
    assert_eq!(
        id_of(idle),
        Some(stop_id),
        "agent.idle does not answer agent.stop: {idle}"
    );
    let text = final_text("phone", &frames);
    assert!(
        text.contains("tick0"),
        "message.stop lost the partial text: {text:?}"
    );
    assert!(
        !text.contains("tick19"),
        "the turn was not stopped: {text:?}"
    );
}

/// Proves approvals reach every device of the account across gateways: the phone (gateway
/// 1) asks for something dangerous, the phone and the tablet (gateway 2) both get the same
/// `picker.approval`, the tablet answers `once`, and both see the tool end ok, the final
/// answer and `agent.idle`.
#[tokio::test]
async fn two_devices_on_two_gateways_both_see_the_approval_and_the_finished_turn() {
    let setup = HermesCluster::start("hermes-two-devices", 2).await;
    let mut phone = setup.device(0, "phone").await;
    let mut tablet = setup.device(1, "tablet").await;

    let mut phone_frames =
        send_and_read_until(&mut phone, "phone", DANGEROUS_PROMPT, "picker.approval").await;
    let mut tablet_frames = tablet.recv_until("picker.approval").await;
    let phone_picker = picker_id_when_asked(&mut phone, "phone", &mut phone_frames).await;
    let tablet_picker = picker_id_when_asked(&mut tablet, "tablet", &mut tablet_frames).await;
    assert_eq!(
        phone_picker, tablet_picker,
        "the devices got different pickers"
    );

    answer_approval(&mut tablet, &tablet_picker, "once").await;
    phone_frames.extend(phone.collect_turn().await);
    tablet_frames.extend(tablet.collect_turn().await);

    for (device, frames) in [("phone", &phone_frames), ("tablet", &tablet_frames)] {
        assert_tool_turn_finished(device, frames, true);
    }
    assert!(
        !setup.hermes.doomed_dir().exists(),
        "the approved rm -rf did not run"
    );
}

/// Proves that a message sent while a Hermes turn is busy with its tool (waiting for the
/// command's approval) is shown at once on both devices (with its request id on the
/// sender) and listed as queued behind the running turn, and that Hermes answers it after
/// the tool turn finishes, in order, each turn once.
#[tokio::test]
async fn a_message_sent_during_a_hermes_tool_turn_is_shown_at_once_and_answered_after_it() {
    let setup = HermesCluster::start("hermes-busy", 2).await;
    let mut phone = setup.device(0, "phone").await;
    let mut tablet = setup.device(1, "tablet").await;

    let mut on_phone =
        send_and_read_until(&mut phone, "phone", DANGEROUS_PROMPT, "picker.approval").await;
    let picker_id = picker_id_when_asked(&mut phone, "phone", &mut on_phone).await;
    let second_id = phone.send_message(PLAIN_PROMPT).await;
    let queue_shown = |frame: &Value| {
        payload(frame)["queued"]
            .as_array()
            .is_some_and(|q| q.len() == 1)
    };
    let shown_on_phone = phone.recv_until_match("agent.busy", queue_shown).await;
    let shown_on_tablet = tablet.recv_until_match("agent.busy", queue_shown).await;
    for (device, frames, expected_id) in [
        ("phone", &shown_on_phone, Some(second_id)),
        ("tablet", &shown_on_tablet, None),
    ] {
        let echo = frames
            .iter()
            .find(|frame| is_user_message(frame, PLAIN_PROMPT))
            .unwrap_or_else(|| panic!("[{device}] the second message not shown: {frames:#?}"));
        assert_eq!(id_of(echo), expected_id, "[{device}] {echo}");
        let queued = &payload(frames.last().expect("the busy frame"))["queued"];
        assert_eq!(
            queued[0],
            payload(echo)["message_id"],
            "[{device}] {queued}"
        );
        assert!(
            !frames.iter().any(|frame| type_of(frame) == "message.stop"),
            "[{device}] shown only after the tool turn ended: {frames:#?}"
        );
    }
    on_phone.extend(shown_on_phone);

    answer_approval(&mut phone, &picker_id, "once").await;
    let plain_answered = |frame: &Value| payload_str(frame, "final_text") == Some(PLAIN_ANSWER);
    on_phone.extend(phone.recv_until_match("message.stop", plain_answered).await);
    on_phone.extend(phone.recv_until("agent.idle").await);
    let stops = of_type(&on_phone, "message.stop");
    assert_eq!(stops.len(), 2, "one answer each: {stops:#?}");
    assert!(
        payload_str(stops[0], "final_text")
            .is_some_and(|t| t.contains(TOOL_ANSWER_PREFIX.trim_end())),
        "the tool turn is answered first: {stops:#?}"
    );
    assert!(
        plain_answered(stops[1]),
        "then the queued message: {stops:#?}"
    );
}
