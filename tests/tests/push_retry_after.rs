//! Push honours `Retry-After`: when ntfy answers `503` or FCM answers `429` with
//! `Retry-After: 2`, the worker's next attempt comes no sooner than two seconds later
//! (not after the half-second backoff), and that attempt delivers the push. Recorders
//! stand in for ntfy, Google's token endpoint and FCM; the cluster runs the real binaries.

use std::time::Duration;

use serde_json::json;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{gateway_node_id, ClusterSpec};
use iris_tests::http_recorder::{Answer, HttpRecorder, RecordedRequest};
use iris_tests::resp::Reply;
use iris_tests::scratch_dir::ScratchDir;

const ADMIN_KEY: &str = "admin-key-for-retry-after-0123456789";
const ACCOUNT: &str = "rita";
/// The pause the stand-ins ask for.
const ASKED: Duration = Duration::from_secs(2);
/// Far above the asked pause and a send's timeouts, far below a hang.
const PUSH_TIMEOUT: Duration = Duration::from_secs(20);
/// The throwaway FCM test key pair (worker/tests/fixtures/push/README.md).
const FCM_KEY: &str = include_str!("../../worker/tests/fixtures/push/fcm_test_key.pem");
const FCM_SEND_PATH: &str = "/v1/projects/iris-test/messages:send";
const FCM_TOKEN_PATH: &str = "/token";

/// The first request at a path is refused with `status` and `Retry-After: 2`; every later
/// one succeeds.
fn refusing_once(status: u16, request: &RecordedRequest, earlier: usize) -> Answer {
    if request.path == FCM_TOKEN_PATH {
        let token = json!({ "access_token": "ya29.retry-after", "expires_in": 3599 });
        return Answer {
            status: 200,
            body: token.to_string(),
            ..Answer::default()
        };
    }
    if earlier == 0 {
        return Answer {
            status,
            headers: vec![("Retry-After".to_owned(), ASKED.as_secs().to_string())],
            body: json!({ "error": "slow down" }).to_string(),
        };
    }
    Answer {
        status: 200,
        body: json!({ "name": "projects/iris-test/messages/1" }).to_string(),
        ..Answer::default()
    }
}

/// Pairs a device announcing `push_target` (hello payload fields), disconnects it, waits
/// until the cluster no longer counts it online, then publishes a message for its account.
async fn push_to_an_offline_device(cluster: &Cluster, push_target: serde_json::Value) {
    let token = cluster.create_token(ACCOUNT);
    let mut phone = cluster.connect(0, "phone").await;
    let mut payload = json!({ "token": token, "device_id": "phone-1" });
    payload
        .as_object_mut()
        .unwrap()
        .extend(push_target.as_object().unwrap().clone());
    phone
        .send(&json!({ "v": 1, "id": 1, "type": "hello", "payload": payload }))
        .await;
    phone.recv_until("hello.ack").await;
    phone.close().await;
    let presence = iris_shared::keys::AccountKeys::new(ACCOUNT).presence();
    let held = iris_shared::presence::member(&gateway_node_id(0), "phone-1");
    let deadline = std::time::Instant::now() + PUSH_TIMEOUT;
    while cluster
        .redis_command(&["ZSCORE", &presence, &held])
        .unwrap()
        != Reply::Nil
    {
        assert!(
            std::time::Instant::now() < deadline,
            "phone-1 stayed online"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let body = json!({ "text": "The report is ready", "role": "cron" }).to_string();
    let path = format!("/api/v1/accounts/{ACCOUNT}/messages");
    let response = cluster
        .server_api(0, "POST", &path, Some(ADMIN_KEY), Some(&body))
        .await;
    assert_eq!(response.status, 202, "{response:?}");
}

/// The two attempts at `path`: the second came no sooner than [`ASKED`] after the first,
/// and the worker logged the push as sent on it.
async fn assert_retried_after_the_asked_pause(
    cluster: &Cluster,
    recorder: &HttpRecorder,
    path: &str,
) {
    let attempts = recorder.expect_at(path, 2, PUSH_TIMEOUT).await;
    let gap = attempts[1].arrived_at - attempts[0].arrived_at;
    assert!(
        gap >= ASKED,
        "the retry came {gap:?} after the refusal asking for {ASKED:?}"
    );
    let deadline = std::time::Instant::now() + PUSH_TIMEOUT;
    while !cluster
        .worker_log(0)
        .lines()
        .any(|line| line.contains("push sent") && line.contains("attempts=2"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no push sent on the second attempt:\n{}",
            cluster.worker_log(0)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Proves that a `503` from ntfy with `Retry-After: 2` holds the next attempt back two
/// seconds, and that attempt delivers the push.
#[tokio::test]
async fn ntfy_retries_a_503_no_sooner_than_its_retry_after() {
    let ntfy = HttpRecorder::answering_with_headers(|request, earlier| {
        refusing_once(503, request, earlier)
    });
    let spec = ClusterSpec::default()
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_NTFY_URL", &ntfy.url());
    let cluster = Cluster::start("push-retry-after-ntfy", spec).await;
    push_to_an_offline_device(&cluster, json!({ "ntfy_topic": "rita-phone" })).await;
    assert_retried_after_the_asked_pause(&cluster, &ntfy, "/rita-phone").await;
}

/// Proves that a `429` from FCM with `Retry-After: 2` holds the next attempt back two
/// seconds, and that attempt delivers the push.
#[tokio::test]
async fn fcm_retries_a_429_no_sooner_than_its_retry_after() {
    let google = HttpRecorder::answering_with_headers(|request, earlier| {
        refusing_once(429, request, earlier)
    });
    let scratch = ScratchDir::new("push-retry-after-fcm-key");
    let credentials = scratch.path().join("service-account.json");
    let account = json!({
        "project_id": "iris-test",
        "client_email": "pusher@iris-test.iam.gserviceaccount.com",
        "private_key": FCM_KEY,
        "token_uri": format!("{}{FCM_TOKEN_PATH}", google.url()),
    });
    std::fs::write(&credentials, account.to_string()).expect("writing the key file");
    let spec = ClusterSpec::default()
        .gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY)
        .worker_env("IRIS_FCM_CREDENTIALS", credentials.to_str().unwrap())
        .worker_env("IRIS_FCM_ENDPOINT", &google.url());
    let cluster = Cluster::start("push-retry-after-fcm", spec).await;
    push_to_an_offline_device(&cluster, json!({ "fcm_token": "rita-registration" })).await;
    assert_retried_after_the_asked_pause(&cluster, &google, FCM_SEND_PATH).await;
}
