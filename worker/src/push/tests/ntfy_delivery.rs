//! Who is pushed and how often, through the ntfy stand-in: online devices are skipped, each
//! offline device with a target gets one push per job, a job handled twice (or taken over
//! from a dead dispatcher) pushes once, failures are retried or not, and the rate limit
//! merges pushes and holds across workers.

use std::time::Duration;

use iris_shared::keys;
use iris_shared::push::{claim_send, PushKind, PUSH_GROUP};
use iris_tests::http_recorder::HttpRecorder;
use tokio::time::Instant;

use super::*;
use crate::push::channels::Channels;
use crate::push::fanout::Fanout;

#[tokio::test]
async fn an_online_device_is_not_pushed() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;
    harness.online("phone").await;

    harness.enqueue(&job(1, "Hermes", "Done.")).await;
    harness.wait_all_handled().await;
    // Leave time for a push that should not happen to arrive anyway.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(ntfy.requests().is_empty(), "{:?}", ntfy.requests());
}

#[tokio::test]
async fn an_offline_device_gets_one_push_with_title_body_and_chat() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    harness
        .enqueue(&job(41, "Hermes", "The build is green. Want me to deploy?"))
        .await;
    let pushes = ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    harness.wait_all_handled().await;

    assert_eq!(pushes.len(), 1);
    let push = &pushes[0];
    assert_eq!(push.method, "POST");
    assert_eq!(push.body, "The build is green. Want me to deploy?");
    assert_eq!(push.header("Title"), Some("Hermes"));
    assert_eq!(push.header("X-Iris-Chat"), Some(CHAT));
    assert_eq!(push.header("X-Iris-Seq"), Some("41"));
    assert_eq!(push.header("Tags"), Some("speech_balloon"));
    assert_eq!(
        push.header("Authorization"),
        Some(format!("Bearer {NTFY_TOKEN}").as_str())
    );
    assert_eq!(ntfy.requests().len(), 1, "nothing else was sent");
}

#[tokio::test]
async fn non_ascii_titles_and_pickers_are_pushed_as_ntfy_expects() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    let picker = PushJob {
        kind: PushKind::Picker,
        ..job(7, "Approve «rm»?", "Hermes wants to run a command")
    };
    harness.enqueue(&picker).await;
    let push = ntfy.expect_at("/alice-phone", 1, PATIENCE).await.remove(0);
    assert_eq!(
        push.header("Title"),
        Some("=?UTF-8?B?QXBwcm92ZSDCq3Jtwrs/?=")
    );
    assert_eq!(push.header("Priority"), Some("high"));
    assert_eq!(push.header("Tags"), Some("question"));
}

#[tokio::test]
async fn two_offline_devices_get_a_push_each() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;
    harness
        .set_target("tablet", ntfy_target("alice-tablet"))
        .await;
    harness
        .set_target("laptop", ntfy_target("alice-laptop"))
        .await;
    harness.online("laptop").await;
    // Only FCM reaches this one, and this worker has no FCM.
    harness.set_target("watch", fcm_target("fcm-watch")).await;

    harness.enqueue(&job(5, "Hermes", "Hello")).await;
    ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    ntfy.expect_at("/alice-tablet", 1, PATIENCE).await;
    harness.wait_all_handled().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut paths: Vec<String> = ntfy.requests().into_iter().map(|r| r.path).collect();
    paths.sort();
    assert_eq!(paths, vec!["/alice-phone", "/alice-tablet"]);
}

#[tokio::test]
async fn a_job_handled_twice_pushes_once() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    let same = job(9, "Hermes", "Once");
    harness.enqueue(&same).await;
    harness.enqueue(&same).await;
    harness.wait_all_handled().await;
    ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(ntfy.requests().len(), 1);
}

#[tokio::test]
async fn jobs_left_by_a_dead_dispatcher_are_taken_over_and_pushed_once() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;
    harness
        .set_target("tablet", ntfy_target("alice-tablet"))
        .await;

    // A dispatcher read two jobs and died: it had pushed the first to the phone already.
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(keys::push_jobs())
        .arg(PUSH_GROUP)
        .arg("$")
        .arg("MKSTREAM")
        .query_async(&mut harness.conn)
        .await
        .unwrap();
    harness.enqueue(&job(20, "Hermes", "first")).await;
    harness.enqueue(&job(21, "Hermes", "second")).await;
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg("GROUP")
        .arg(PUSH_GROUP)
        .arg("wk-dead")
        .arg("STREAMS")
        .arg(keys::push_jobs())
        .arg(">")
        .query_async(&mut harness.conn)
        .await
        .unwrap();
    assert!(claim_send(&mut harness.conn, ACCOUNT, "phone", 20)
        .await
        .unwrap());

    let quick_claims = Timing {
        claim_idle: Duration::from_millis(100),
        claim_every: Duration::from_millis(100),
    };
    harness
        .start_dispatcher("wk-alive", &ntfy_settings(&ntfy.url()), quick_claims)
        .await;
    harness.wait_all_handled().await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut pushes: Vec<(String, String)> = ntfy
        .requests()
        .into_iter()
        .map(|r| (r.path, r.body))
        .collect();
    pushes.sort();
    assert_eq!(
        pushes,
        vec![
            ("/alice-phone".to_owned(), "second".to_owned()),
            ("/alice-tablet".to_owned(), "first".to_owned()),
            ("/alice-tablet".to_owned(), "second".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_failing_receiver_is_retried_until_it_takes_the_push() {
    let ntfy = HttpRecorder::answering(|_, earlier| {
        if earlier < 2 {
            (500, r#"{"error": "try later"}"#.to_owned())
        } else {
            (200, "{}".to_owned())
        }
    });
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    let started = Instant::now();
    harness.enqueue(&job(3, "Hermes", "Eventually")).await;
    let attempts = ntfy.expect_at("/alice-phone", 3, PATIENCE).await;
    harness.wait_all_handled().await;
    // Backoff: 0.5 s after the first failure, 1 s after the second.
    assert!(started.elapsed() >= Duration::from_millis(1_500));
    assert!(attempts.iter().all(|a| a.body == "Eventually"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ntfy.requests().len(), 3, "nothing after the success");
}

#[tokio::test]
async fn a_refused_push_is_not_retried() {
    let ntfy = HttpRecorder::answering(|_, _| (400, r#"{"error": "invalid topic"}"#.to_owned()));
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    harness.enqueue(&job(4, "Hermes", "No")).await;
    ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    harness.wait_all_handled().await;
    // Longer than the first backoff pause: a retry would have come by now.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(ntfy.requests().len(), 1);
}

#[tokio::test]
async fn too_many_requests_is_retried() {
    let ntfy = HttpRecorder::answering(|_, earlier| {
        if earlier == 0 {
            (429, "{}".to_owned())
        } else {
            (200, "{}".to_owned())
        }
    });
    let mut harness = Harness::new().await;
    harness.start(&ntfy_settings(&ntfy.url())).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    harness.enqueue(&job(6, "Hermes", "Slow down")).await;
    ntfy.expect_at("/alice-phone", 2, PATIENCE).await;
    harness.wait_all_handled().await;
}

#[tokio::test]
async fn pushes_inside_the_rate_limit_window_are_merged() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    let window = Duration::from_millis(500);
    let settings = PushSettings {
        min_interval: window,
        ..ntfy_settings(&ntfy.url())
    };
    harness.start(&settings).await;
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;

    let started = Instant::now();
    harness.enqueue(&job(10, "Hermes", "one")).await;
    ntfy.expect_at("/alice-phone", 1, PATIENCE).await;
    harness.enqueue(&job(11, "Hermes", "two")).await;
    harness.enqueue(&job(12, "Hermes", "three")).await;
    let pushes = ntfy.expect_at("/alice-phone", 2, PATIENCE).await;
    harness.wait_all_handled().await;
    assert!(started.elapsed() >= window, "the second push waited");
    tokio::time::sleep(Duration::from_millis(700)).await;
    let bodies: Vec<String> = ntfy.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies, vec!["one", "three"], "the latest content wins");
    assert_eq!(pushes[1].header("X-Iris-Seq"), Some("12"));
}

#[tokio::test]
async fn two_workers_pushing_one_device_keep_its_rate_limit_between_them() {
    let ntfy = HttpRecorder::accepting();
    let mut harness = Harness::new().await;
    let window = Duration::from_millis(600);
    let settings = PushSettings {
        min_interval: window,
        ..ntfy_settings(&ntfy.url())
    };
    harness
        .set_target("phone", ntfy_target("alice-phone"))
        .await;
    let worker = |node: &str| {
        let channels = Channels::new(&settings).expect("channels");
        Fanout::new(harness.pool(), channels, window, node.to_owned())
    };
    let (a, b) = (worker("wk-a"), worker("wk-b"));

    let (from_a, from_b) = tokio::join!(
        a.handle(job(20, "Hermes", "from a")),
        b.handle(job(21, "Hermes", "from b"))
    );
    assert_eq!(from_a.expect("worker a").pushed, 1);
    assert_eq!(from_b.expect("worker b").pushed, 1);
    let pushes = ntfy.expect_at("/alice-phone", 2, PATIENCE).await;
    let gap = pushes[1].arrived_at.duration_since(pushes[0].arrived_at);
    assert!(
        gap >= window.mul_f32(0.9),
        "two workers pushed one device {gap:?} apart; the window is {window:?}"
    );
}
