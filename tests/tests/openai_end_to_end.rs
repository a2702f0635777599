//! The `openai` upstream end to end: the cluster's worker talks to the project's scripted
//! OpenAI-compatible LLM, streams its reasoning and answer to devices, and shows it the
//! images attached to a message.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::json;
use sha2::Digest as _;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::fake_llm::FakeLlm;
use iris_tests::frames::{of_type, payload_str, type_of};
use iris_tests::scratch_dir::ScratchDir;

/// Proves that with `IRIS_AGENT=openai` a turn streams the upstream's answer
/// (`message.update`s, then `message.stop` with the final text, the streamed reasoning and
/// the model), that the conversation so far is sent with the next turn, and that an image
/// attached to a message reaches the upstream as an `image_url` content part with the
/// uploaded bytes.
#[tokio::test]
async fn an_openai_upstream_streams_answers_with_reasoning_and_sees_attached_images() {
    let llm = FakeLlm::start("openai-e2e").await;
    let media = ScratchDir::new("openai-e2e-media");
    let store = format!("file://{}", media.path().display());
    let spec = ClusterSpec::default()
        .gateway_env("IRIS_MEDIA_STORE", &store)
        .worker_env("IRIS_MEDIA_STORE", &store)
        .worker_env("IRIS_AGENT", "openai")
        .worker_env("IRIS_AGENT_URL", &llm.url());
    let cluster = Cluster::start("openai-e2e", spec).await;
    let token = cluster.create_token("tess");
    let mut phone = cluster.connect(0, "phone").await;
    let ack = phone.pair(&token, "phone-1").await;
    assert_eq!(ack["payload"]["server_caps"]["reasoning"], true, "{ack}");

    phone.send_message("hello there").await;
    let turn = phone.collect_turn().await;
    assert!(!of_type(&turn, "message.update").is_empty(), "{turn:#?}");
    let stop = of_type(&turn, "message.stop")[0];
    assert!(
        !payload_str(stop, "final_text")
            .unwrap_or_default()
            .is_empty(),
        "{stop}"
    );
    assert!(
        !payload_str(stop, "reasoning")
            .unwrap_or_default()
            .is_empty(),
        "{stop}"
    );
    assert!(payload_str(stop, "model").is_some(), "{stop}");

    let image = b"\x89PNG\r\n\x1a\n not really a png, but bytes".to_vec();
    let sha = hex::encode(sha2::Sha256::digest(&image));
    phone
        .request("media.upload.start", None, json!({ "media_ref": "pic", "kind": "image", "mime": "image/png", "size": image.len() }))
        .await;
    let mut chunk = vec![0x01, 3];
    chunk.extend_from_slice(b"pic");
    chunk.extend_from_slice(&image);
    phone.send_binary(chunk).await;
    phone
        .request(
            "media.upload.end",
            None,
            json!({ "media_ref": "pic", "sha256": sha }),
        )
        .await;
    let offer = phone.recv_until("media.offer").await.pop().unwrap();
    assert_eq!(type_of(&offer), "media.offer");

    phone
        .request(
            "message.send",
            None,
            json!({ "text": "what is in this picture?", "media_refs": ["pic"] }),
        )
        .await;
    phone.collect_turn().await;

    let bodies = llm.request_bodies();
    let last = bodies.last().expect("the upstream was called");
    let messages = last["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["content"] == "hello there"),
        "the earlier turn is part of the conversation: {last:#}"
    );
    let parts = messages.last().unwrap()["content"]
        .as_array()
        .expect("content parts");
    assert_eq!(parts[0]["text"], "what is in this picture?");
    let expected = format!("data:image/png;base64,{}", BASE64.encode(&image));
    assert_eq!(parts[1]["image_url"]["url"], json!(expected));
}
