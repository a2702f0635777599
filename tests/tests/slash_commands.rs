//! Slash commands, the command catalog and the model picker, served by the worker and seen
//! on every device of the account.

use serde_json::json;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, of_type, payload_str, type_of};

const CHAT: &str = "android:default";

/// Proves that `/help` is echoed as the user's message (answering the request) and
/// answered by a system message listing the commands, on every device.
#[tokio::test]
async fn help_is_answered_with_a_system_message_listing_the_commands_on_every_device() {
    let cluster = Cluster::start("slash-help", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("erin");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    let id = phone.send_message("/help").await;
    for (device, frames) in [
        (
            "phone",
            phone
                .recv_until_match("message", |f| payload_str(f, "role") == Some("system"))
                .await,
        ),
        (
            "tablet",
            tablet
                .recv_until_match("message", |f| payload_str(f, "role") == Some("system"))
                .await,
        ),
    ] {
        let messages = of_type(&frames, "message");
        assert_eq!(messages.len(), 2, "[{device}] {frames:#?}");
        assert_eq!(payload_str(messages[0], "text"), Some("/help"));
        assert_eq!(id_of(messages[0]), (device == "phone").then_some(id));
        let help = payload_str(messages[1], "text").unwrap_or_default();
        for command in [
            "/new", "/model", "/retry", "/undo", "/stop", "/steer", "/approve", "/deny",
        ] {
            assert!(
                help.contains(command),
                "[{device}] {command} missing from {help}"
            );
        }
    }
}

/// Proves that `commands.catalog` and `commands.complete` answer the requesting device
/// with the registry: the catalog holds every required command, and completion of `/mo`
/// offers `/model`.
#[tokio::test]
async fn the_catalog_and_completion_come_from_one_registry() {
    let cluster = Cluster::start("slash-catalog", ClusterSpec::default()).await;
    let token = cluster.create_token("frank");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let id = phone
        .request("commands.catalog", Some(CHAT), json!({}))
        .await;
    let catalog = phone.recv_until("commands.catalog").await.pop().unwrap();
    assert_eq!(id_of(&catalog), Some(id));
    let names: Vec<&str> = catalog["payload"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for required in [
        "/new",
        "/model",
        "/retry",
        "/undo",
        "/stop",
        "/title",
        "/help",
        "/commands",
        "/status",
        "/reasoning",
        "/approve",
        "/deny",
        "/steer",
    ] {
        assert!(names.contains(&required), "{required} not in {names:?}");
    }

    let id = phone
        .request("commands.complete", Some(CHAT), json!({ "prefix": "/mo" }))
        .await;
    let complete = phone.recv_until("commands.complete").await.pop().unwrap();
    assert_eq!(id_of(&complete), Some(id));
    assert_eq!(complete["payload"]["matches"][0]["name"], "/model");
}

/// Proves that `/model` opens a model picker on every device, that a `picker.select`
/// from one device stores the choice (every device is told, with the picker id), and
/// that the next turn reports the chosen model.
#[tokio::test]
async fn a_model_chosen_in_the_picker_is_stored_for_the_chat_and_used_by_the_next_turn() {
    let cluster = Cluster::start("slash-model", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("gina");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("/model").await;
    let picker = phone.recv_until("picker.model").await.pop().unwrap();
    tablet.recv_until("picker.model").await;
    let picker_id = payload_str(&picker, "picker_id").unwrap().to_owned();
    let model = picker["payload"]["providers"][0]["models"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let id = tablet
        .request(
            "picker.select",
            None,
            json!({ "picker_id": picker_id, "value": model }),
        )
        .await;
    let resolved = tablet.recv_until("notification").await.pop().unwrap();
    assert_eq!(id_of(&resolved), Some(id));
    assert_eq!(
        payload_str(&resolved, "picker_id"),
        Some(picker_id.as_str())
    );
    let on_phone = phone.recv_until("notification").await.pop().unwrap();
    assert_eq!(payload_str(&on_phone, "choice"), Some(model.as_str()));

    phone.send_message("which model answers?").await;
    let turn = phone.collect_turn().await;
    let stop = of_type(&turn, "message.stop")[0];
    assert_eq!(payload_str(stop, "model"), Some(model.as_str()));

    let again = tablet
        .request(
            "picker.select",
            Some(CHAT),
            json!({ "picker_id": picker_id, "value": model }),
        )
        .await;
    let error = tablet.recv_until("error").await.pop().unwrap();
    assert_eq!(id_of(&error), Some(again));
    assert_eq!(payload_str(&error, "code"), Some("not_found"), "{error}");
}

/// Proves that `agent.stop` during a streamed turn ends it early and cleanly: a
/// `message.stop` with the partial text, then `agent.idle` answering the stop request.
#[tokio::test]
async fn agent_stop_ends_the_running_turn_with_partial_text_and_idle() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "300");
    let cluster = Cluster::start("agent-stop", spec).await;
    let token = cluster.create_token("hank");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let text = "a long answer that takes a while to stream back to the phone";
    phone.send_message(text).await;
    phone.recv_until("message.update").await;
    let stop_id = phone.request("agent.stop", Some(CHAT), json!({})).await;
    let rest = phone.collect_turn().await;
    let stop = of_type(&rest, "message.stop")[0];
    let final_text = payload_str(stop, "final_text").unwrap_or_default();
    assert!(
        final_text.len() < format!("echo: {text}").len(),
        "not stopped early: {final_text:?}"
    );
    let idle = rest.last().unwrap();
    assert_eq!(type_of(idle), "agent.idle");
    assert_eq!(id_of(idle), Some(stop_id));
}

/// Proves that `/title` renames the chat on every device (`channel.renamed`) and that the
/// new name is what the next pairing lists.
#[tokio::test]
async fn title_renames_the_chat_for_every_device() {
    let cluster = Cluster::start("slash-title", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("iris");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("/title Project Kestrel").await;
    for client in [&mut phone, &mut tablet] {
        let renamed = client.recv_until("channel.renamed").await.pop().unwrap();
        assert_eq!(payload_str(&renamed, "chat_id"), Some(CHAT));
        assert_eq!(payload_str(&renamed, "name"), Some("Project Kestrel"));
    }
    let mut laptop = cluster.connect(1, "laptop").await;
    let ack = laptop.pair(&token, "laptop-1").await;
    assert_eq!(ack["payload"]["channels"][0]["name"], "Project Kestrel");
}

/// Proves that a destructive command (`/new`) first asks every device with
/// `picker.confirm`, that confirming from one device runs it and resolves the picker on
/// all of them, and that the picker cannot be answered twice.
#[tokio::test]
async fn new_asks_for_confirmation_on_every_device_before_it_runs() {
    let cluster = Cluster::start("slash-confirm", ClusterSpec::default().gateways(2)).await;
    let token = cluster.create_token("jill");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    phone.send_message("/new").await;
    let confirm = phone.recv_until("picker.confirm").await.pop().unwrap();
    let on_tablet = tablet.recv_until("picker.confirm").await.pop().unwrap();
    let picker_id = payload_str(&confirm, "picker_id").unwrap().to_owned();
    assert_eq!(
        payload_str(&on_tablet, "picker_id"),
        Some(picker_id.as_str())
    );

    let id = tablet
        .request(
            "picker.select",
            None,
            json!({ "picker_id": picker_id, "value": "yes" }),
        )
        .await;
    let resolved = tablet.recv_until("notification").await.pop().unwrap();
    assert_eq!(id_of(&resolved), Some(id));
    assert_eq!(payload_str(&resolved, "choice"), Some("yes"));
    let on_phone = phone.recv_until("notification").await.pop().unwrap();
    assert_eq!(
        payload_str(&on_phone, "picker_id"),
        Some(picker_id.as_str())
    );
    assert!(
        payload_str(&on_phone, "title")
            .unwrap_or_default()
            .contains("new conversation"),
        "{on_phone}"
    );

    let again = phone
        .request(
            "picker.select",
            None,
            json!({ "picker_id": picker_id, "value": "yes" }),
        )
        .await;
    let error = phone.recv_until("error").await.pop().unwrap();
    assert_eq!(id_of(&error), Some(again));
}
