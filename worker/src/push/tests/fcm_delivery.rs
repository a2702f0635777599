//! Pushing through FCM against stand-ins for Google's token endpoint and the FCM API: the
//! signed OAuth assertion, the token cache, a refused token, the message, and a device
//! pushed through both services.

use iris_shared::push::PushKind;
use iris_tests::http_recorder::{HttpRecorder, RecordedRequest};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::json;

use super::*;
use crate::push::fcm::access_token::{Claims, SCOPE};
use crate::push::fcm::credentials::ServiceAccount;
use crate::push::settings::FcmSettings;

/// The throwaway test key pair (see `worker/tests/fixtures/push/README.md`).
const PRIVATE_KEY: &str = include_str!("../../../tests/fixtures/push/fcm_test_key.pem");
const PUBLIC_KEY: &str = include_str!("../../../tests/fixtures/push/fcm_test_key.pub.pem");
const PROJECT: &str = "iris-test";
const CLIENT_EMAIL: &str = "pusher@iris-test.iam.gserviceaccount.com";
const TOKEN_PATH: &str = "/token";
const SEND_PATH: &str = "/v1/projects/iris-test/messages:send";

/// The token endpoint's answer: access token `ya29.test-<n>` for the n-th request.
fn token_reply(earlier: usize) -> (u16, String) {
    let reply = json!({
        "access_token": format!("ya29.test-{}", earlier + 1),
        "expires_in": 3599,
        "token_type": "Bearer",
    });
    (200, reply.to_string())
}

/// A stand-in for Google: tokens at [`TOKEN_PATH`], sends answered by `send`.
fn google(
    send: impl Fn(&RecordedRequest, usize) -> (u16, String) + Send + Sync + 'static,
) -> HttpRecorder {
    HttpRecorder::answering(move |request, earlier| {
        if request.path == TOKEN_PATH {
            token_reply(earlier)
        } else {
            send(request, earlier)
        }
    })
}

fn accepting_google() -> HttpRecorder {
    google(|_, n| {
        (
            200,
            json!({"name": format!("projects/{PROJECT}/messages/{n}")}).to_string(),
        )
    })
}

/// Settings pushing through FCM at `google`, the token endpoint named by the key file.
fn fcm_settings(google: &HttpRecorder) -> PushSettings {
    PushSettings {
        ntfy: None,
        fcm: Some(FcmSettings {
            account: ServiceAccount {
                project_id: PROJECT.to_owned(),
                client_email: CLIENT_EMAIL.to_owned(),
                private_key: PRIVATE_KEY.to_owned(),
                token_uri: format!("{}{TOKEN_PATH}", google.url()),
            },
            token_url: None,
            endpoint: google.url(),
        }),
        min_interval: Duration::ZERO,
    }
}

/// A field of a form-encoded body (values here need no percent-decoding but `:`).
fn form_field(body: &str, name: &str) -> String {
    body.split('&')
        .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {body}"))
        .replace("%3A", ":")
}

/// The claims of the assertion in a token request, after checking its RS256 signature
/// with the public key and its audience.
fn verified_claims(request: &RecordedRequest, audience: &str) -> Claims {
    assert_eq!(
        form_field(&request.body, "grant_type"),
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[audience]);
    jsonwebtoken::decode::<Claims>(
        &form_field(&request.body, "assertion"),
        &DecodingKey::from_rsa_pem(PUBLIC_KEY.as_bytes()).unwrap(),
        &validation,
    )
    .expect("an assertion signed by the service account's key")
    .claims
}

#[tokio::test]
async fn an_offline_device_is_pushed_through_fcm_with_a_signed_assertion() {
    let google = accepting_google();
    let mut harness = Harness::new().await;
    let settings = fcm_settings(&google);
    harness.start(&settings).await;
    harness
        .set_target("phone", fcm_target("fcm-phone-token"))
        .await;

    harness
        .enqueue(&PushJob {
            kind: PushKind::Notification,
            ..job(77, "Reminder", "Stand-up in 5 minutes")
        })
        .await;
    let sends = google.expect_at(SEND_PATH, 1, PATIENCE).await;
    harness.wait_all_handled().await;

    let tokens = google.requests_at(TOKEN_PATH);
    assert_eq!(tokens.len(), 1);
    let claims = verified_claims(&tokens[0], &format!("{}{TOKEN_PATH}", google.url()));
    assert_eq!(claims.iss, CLIENT_EMAIL);
    assert_eq!(claims.scope, SCOPE);
    assert!(claims.exp > claims.iat && claims.exp - claims.iat <= 3_600);

    assert_eq!(sends[0].header("Authorization"), Some("Bearer ya29.test-1"));
    assert_eq!(
        sends[0].json(),
        json!({"message": {
            "token": "fcm-phone-token",
            "notification": {"title": "Reminder", "body": "Stand-up in 5 minutes"},
            "data": {"chat_id": CHAT, "seq": "77", "kind": "notification"},
        }})
    );
}

#[tokio::test]
async fn the_access_token_is_fetched_once_for_many_pushes() {
    let google = accepting_google();
    let mut harness = Harness::new().await;
    harness.start(&fcm_settings(&google)).await;
    harness.set_target("phone", fcm_target("fcm-phone")).await;
    harness.set_target("tablet", fcm_target("fcm-tablet")).await;

    harness.enqueue(&job(1, "Hermes", "one")).await;
    harness.enqueue(&job(2, "Hermes", "two")).await;
    let sends = google.expect_at(SEND_PATH, 4, PATIENCE).await;
    harness.wait_all_handled().await;
    assert_eq!(google.requests_at(TOKEN_PATH).len(), 1);
    assert!(sends
        .iter()
        .all(|s| s.header("Authorization") == Some("Bearer ya29.test-1")));
}

#[tokio::test]
async fn a_refused_access_token_is_replaced_and_the_push_retried() {
    let google = google(|_, earlier| {
        if earlier == 0 {
            (
                401,
                json!({"error": {"status": "UNAUTHENTICATED"}}).to_string(),
            )
        } else {
            (200, "{}".to_owned())
        }
    });
    let mut harness = Harness::new().await;
    harness.start(&fcm_settings(&google)).await;
    harness.set_target("phone", fcm_target("fcm-phone")).await;

    harness.enqueue(&job(1, "Hermes", "hi")).await;
    let sends = google.expect_at(SEND_PATH, 2, PATIENCE).await;
    harness.wait_all_handled().await;
    assert_eq!(google.requests_at(TOKEN_PATH).len(), 2);
    assert_eq!(sends[0].header("Authorization"), Some("Bearer ya29.test-1"));
    assert_eq!(sends[1].header("Authorization"), Some("Bearer ya29.test-2"));
}

#[tokio::test]
async fn the_token_url_flag_redirects_requests_but_not_the_audience() {
    let google = accepting_google();
    let mut harness = Harness::new().await;
    let mut settings = fcm_settings(&google);
    let fcm = settings.fcm.as_mut().unwrap();
    fcm.account.token_uri = "https://oauth2.googleapis.com/token".to_owned();
    fcm.token_url = Some(format!("{}{TOKEN_PATH}", google.url()));
    harness.start(&settings).await;
    harness.set_target("phone", fcm_target("fcm-phone")).await;

    harness.enqueue(&job(1, "Hermes", "hi")).await;
    google.expect_at(SEND_PATH, 1, PATIENCE).await;
    let tokens = google.requests_at(TOKEN_PATH);
    verified_claims(&tokens[0], "https://oauth2.googleapis.com/token");
}

#[tokio::test]
async fn a_device_with_both_targets_is_pushed_through_both_services() {
    let google = accepting_google();
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    let settings = PushSettings {
        ntfy: ntfy_settings(&ntfy.url()).ntfy,
        ..fcm_settings(&google)
    };
    harness.start(&settings).await;
    harness
        .set_target(
            "phone",
            PushTarget {
                fcm_token: Some("fcm-phone".to_owned()),
                ntfy_topic: Some("alice-phone".to_owned()),
            },
        )
        .await;
    harness
        .set_target("tablet", ntfy_target("alice-tablet"))
        .await;

    harness.enqueue(&job(1, "Hermes", "hi")).await;
    google.expect_at(SEND_PATH, 1, PATIENCE).await;
    ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    ntfy.expect_at("/alice-tablet", 1, PATIENCE).await;
    harness.wait_all_handled().await;
    assert_eq!(google.requests_at(SEND_PATH).len(), 1);
    assert_eq!(ntfy.requests().len(), 2);
}
