//! Live-only frames against a private, real `redis-server`: their append reads the chat's
//! fence and the account's nodes without the script, and still refuses an older writer and
//! raises the fence for a newer one (through the script) as kept frames do.

mod support;

use support::{command_calls, Redis};

use redis::aio::MultiplexedConnection;

use iris_shared::delivery::RoutedFrame;
use iris_shared::keys::AccountKeys;
use iris_shared::outbox::{append, Append, AppendOutcome};
use iris_shared::presence;

const ACCOUNT: &str = "ivy";
const CHAT: &str = "android:default";
const NOW_MS: u64 = 1_800_000_000_000;

fn update(fence: Option<u64>) -> Append {
    Append {
        frame: RoutedFrame::new(ACCOUNT, None, r#"{"type":"message.update"}"#),
        chat_id: CHAT.into(),
        fence,
        effect: None,
        outboxed: false,
        history: None,
    }
}

async fn chat_fence(conn: &mut MultiplexedConnection) -> Option<u64> {
    redis::cmd("GET")
        .arg(AccountKeys::new(ACCOUNT).chat_fence(CHAT))
        .query_async(conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_live_frame_goes_to_the_accounts_nodes_only_from_the_chats_current_owner() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let held = [
        (ACCOUNT.to_owned(), "phone".to_owned()),
        (ACCOUNT.to_owned(), "tablet".to_owned()),
    ];
    presence::hold(&mut conn, "gw-a", &held, 1, NOW_MS)
        .await
        .unwrap();
    presence::hold(&mut conn, "gw-b", &held[..1], 1, NOW_MS)
        .await
        .unwrap();
    let to_both = |outcome: AppendOutcome| match outcome {
        AppendOutcome::Written {
            seq: None,
            mut nodes,
        } => {
            nodes.sort();
            assert_eq!(nodes, ["gw-a", "gw-b"]);
        }
        other => panic!("not written live: {other:?}"),
    };

    let before = command_calls(&mut conn, &["eval", "evalsha"]).await;
    to_both(append(&mut conn, &update(None), NOW_MS).await.unwrap());
    assert_eq!(
        chat_fence(&mut conn).await,
        None,
        "an unfenced frame sets no fence"
    );
    assert_eq!(
        command_calls(&mut conn, &["eval", "evalsha"]).await,
        before,
        "no script for it"
    );

    // The first owner's frame raises the chat's fence; then it writes as the owner.
    to_both(append(&mut conn, &update(Some(7)), NOW_MS).await.unwrap());
    assert_eq!(chat_fence(&mut conn).await, Some(7));
    let before = command_calls(&mut conn, &["eval", "evalsha"]).await;
    to_both(append(&mut conn, &update(Some(7)), NOW_MS).await.unwrap());
    assert_eq!(
        command_calls(&mut conn, &["eval", "evalsha"]).await,
        before,
        "no script for the owner's frame"
    );

    // A newer owner takes over; the old one is refused from then on.
    to_both(append(&mut conn, &update(Some(9)), NOW_MS).await.unwrap());
    assert_eq!(chat_fence(&mut conn).await, Some(9));
    assert_eq!(
        append(&mut conn, &update(Some(7)), NOW_MS).await.unwrap(),
        AppendOutcome::Fenced
    );
}
