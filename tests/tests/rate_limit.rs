//! The per-connection frame rate limit: frames over it are refused with `rate_limited`,
//! the connection stays, and frames are accepted again once the device slows down.

use std::time::Duration;

use serde_json::json;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, type_of};

/// Proves that a burst of pings beyond `IRIS_FRAME_BURST` gets `error {code:
/// rate_limited}` answering the refused requests' ids, that every request still gets
/// exactly one answer, and that after a pause the device is served again.
#[tokio::test]
async fn frames_over_the_rate_limit_are_refused_and_the_connection_recovers() {
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_FRAME_RATE", "2")
        .gateway_env("IRIS_FRAME_BURST", "4");
    let cluster = Cluster::start("rate-limit", spec).await;
    let token = cluster.create_token("yara");
    let mut phone = cluster.connect(0, "phone").await;
    phone.hello(&token, "phone-1").await;

    let ids: Vec<u64> = {
        let mut ids = Vec::new();
        for _ in 0..8 {
            ids.push(phone.request("ping", None, json!({})).await);
        }
        ids
    };
    let mut limited = 0;
    for id in &ids {
        let answer = phone.recv().await;
        assert_eq!(id_of(&answer), Some(*id), "{answer}");
        match type_of(&answer) {
            "pong" => {}
            "error" => {
                assert_eq!(
                    payload_str(&answer, "code"),
                    Some("rate_limited"),
                    "{answer}"
                );
                limited += 1;
            }
            other => panic!("unexpected {other}: {answer}"),
        }
    }
    assert!(limited >= 4, "only {limited} of 8 pings were limited");

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let id = phone.request("ping", None, json!({})).await;
    let pong = phone.recv().await;
    assert_eq!((type_of(&pong), id_of(&pong)), ("pong", Some(id)), "{pong}");
}
