//! A gateway renews the online claims of all its devices in a few pipelined round trips
//! (`push::renew_online`); this holds that batched renewal to the per-device semantics.

use iris_shared::push::{mark_online, online_devices, renew_online, ONLINE_TTL_MS};
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;

/// Proves that one batched renewal keeps every device of every account online for another
/// TTL, across more accounts than one pipeline holds, and that a device left out of the
/// renewal falls out once its claim expires.
#[tokio::test]
async fn a_batched_renewal_keeps_every_device_online_and_lets_the_rest_expire() {
    let scratch = ScratchDir::new("online-renewal");
    let redis = RedisServer::start(scratch.path());
    let client = redis::Client::open(redis.url()).expect("Redis URL");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connecting to Redis");

    let start = 1_000_000_u64;
    mark_online(&mut conn, "acct-0", "left-out", start)
        .await
        .expect("marking a device online");
    let devices: Vec<(String, Vec<String>)> = (0..2_500)
        .map(|n| {
            (
                format!("acct-{n}"),
                vec![format!("phone-{n}"), format!("tablet-{n}")],
            )
        })
        .collect();
    renew_online(&mut conn, &devices, start)
        .await
        .expect("first renewal");
    let later = start + ONLINE_TTL_MS - 1;
    renew_online(&mut conn, &devices, later)
        .await
        .expect("second renewal");

    let after_first_ttl = start + ONLINE_TTL_MS + 1;
    for n in [0, 999, 1_000, 2_499] {
        let online = online_devices(&mut conn, &format!("acct-{n}"), after_first_ttl)
            .await
            .expect("reading online devices");
        let expected: std::collections::HashSet<String> =
            [format!("phone-{n}"), format!("tablet-{n}")].into();
        assert_eq!(online, expected, "account {n}");
    }
    let after_second_ttl = later + ONLINE_TTL_MS + 1;
    let gone = online_devices(&mut conn, "acct-7", after_second_ttl)
        .await
        .expect("reading online devices");
    assert!(gone.is_empty(), "claims not renewed again expire: {gone:?}");
}
