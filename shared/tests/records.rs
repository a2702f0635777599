//! Integration tests of the small records' owners (tokens, device records, open pickers,
//! the announced agent capabilities) against a private, real `redis-server`.

mod support;

use support::Redis;

use iris_shared::agent_capabilities::{self, AgentCapabilities};
use iris_shared::devices::{self, DeviceRecord};
use iris_shared::pickers::{self, PickerKind, ACTION_FIELD};
use iris_shared::protocol::enums::PushKind;
use iris_shared::push::{self, PushTarget};
use iris_shared::{redis_conn, tokens};

const ACCOUNT: &str = "alice";

#[tokio::test]
async fn tokens_verify_list_and_revoke_with_their_devices_push_targets() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    redis_conn::ping(&mut conn).await.unwrap();

    let token = tokens::create(&mut conn, ACCOUNT, "tablet").await.unwrap();
    let other = tokens::create(&mut conn, ACCOUNT, "phone").await.unwrap();
    assert!(matches!(
        tokens::create(&mut conn, "a}b", "bad").await,
        Err(tokens::TokenError::InvalidAccount(_))
    ));
    let verified = tokens::verify(&mut conn, &token).await.unwrap();
    assert_eq!(verified.as_deref(), Some(ACCOUNT));
    assert_eq!(
        tokens::verify(&mut conn, "iris_unknown").await.unwrap(),
        None
    );
    let listed = tokens::list(&mut conn, ACCOUNT).await.unwrap();
    let mut names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["phone", "tablet"]);

    let token_id = |token: &str| tokens::id_of(&tokens::digest(token)).to_owned();
    let target = PushTarget {
        fcm_token: None,
        ntfy_topic: Some("topic".into()),
    };
    for (device, token) in [("tablet-1", &token), ("phone-1", &other)] {
        let record = DeviceRecord::paired(device, 1, "gw-1", &token_id(token));
        devices::record_and_read_announced(&mut conn, ACCOUNT, device, &record)
            .await
            .unwrap();
        push::set_target(&mut conn, ACCOUNT, device, &target)
            .await
            .unwrap();
    }

    let revoked = tokens::revoke_and_disconnect(&mut conn, &token).await;
    assert_eq!(revoked.unwrap().as_deref(), Some(ACCOUNT));
    assert_eq!(tokens::verify(&mut conn, &token).await.unwrap(), None);
    assert_eq!(tokens::revoke(&mut conn, &token).await.unwrap(), None);
    let left = push::targets(&mut conn, ACCOUNT).await.unwrap();
    assert_eq!(left.keys().collect::<Vec<_>>(), ["phone-1"]);
    assert_eq!(tokens::list(&mut conn, ACCOUNT).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_pairing_records_the_device_and_reads_what_the_workers_announced() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let capabilities = AgentCapabilities {
        kind: "hermes".into(),
        tools: true,
        reasoning: true,
        approvals: false,
        steer: true,
    };
    agent_capabilities::announce(&mut conn, &capabilities)
        .await
        .unwrap();
    agent_capabilities::announce_push(&mut conn, PushKind::Fcm)
        .await
        .unwrap();

    let record = DeviceRecord::paired("Pixel", 42, "gw-2", "0123456789ab");
    let announced = devices::record_and_read_announced(&mut conn, ACCOUNT, "phone", &record)
        .await
        .unwrap();
    assert_eq!(announced.agent, capabilities);
    assert_eq!(announced.push, PushKind::Fcm);
    assert_eq!(
        agent_capabilities::read(&mut conn).await.unwrap(),
        announced
    );

    let listed = devices::list(&mut conn, ACCOUNT).await.unwrap();
    assert_eq!(
        listed.into_iter().collect::<Vec<_>>(),
        [("phone".to_owned(), record)]
    );
}

#[tokio::test]
async fn a_picker_is_answered_at_most_once() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let chat = "android:default";
    pickers::open(
        &mut conn,
        ACCOUNT,
        chat,
        "model-1",
        PickerKind::Model,
        &[],
        60,
    )
    .await
    .unwrap();
    let extra = [(ACTION_FIELD, "new")];
    pickers::open(
        &mut conn,
        ACCOUNT,
        chat,
        "confirm-1",
        PickerKind::Confirm,
        &extra,
        60,
    )
    .await
    .unwrap();

    let open_chat = pickers::chat_of_open(&mut conn, ACCOUNT, "model-1").await;
    assert_eq!(open_chat.unwrap().as_deref(), Some(chat));
    assert!(pickers::close(&mut conn, ACCOUNT, "model-1").await.unwrap());
    assert!(!pickers::close(&mut conn, ACCOUNT, "model-1").await.unwrap());
    let closed_chat = pickers::chat_of_open(&mut conn, ACCOUNT, "model-1").await;
    assert_eq!(closed_chat.unwrap(), None);

    let action = pickers::take_field(&mut conn, ACCOUNT, "confirm-1", ACTION_FIELD).await;
    assert_eq!(action.unwrap().as_deref(), Some("new"));
    let again = pickers::take_field(&mut conn, ACCOUNT, "confirm-1", ACTION_FIELD).await;
    assert_eq!(again.unwrap(), None);
}
