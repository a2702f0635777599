//! Live publication against a private, real `redis-server`: the append script publishes a
//! frame once on the account's live channel, which every gateway node holding one of its
//! devices subscribes to, in the same step as its append (no second round trip): kept
//! frames with their seq, live-only frames without, and never a frame of a writer the
//! chat's fence refuses.

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::MultiplexedConnection;
use support::{command_calls, Redis};

use iris_shared::delivery::{self, RoutedFrame};
use iris_shared::keys::AccountKeys;
use iris_shared::outbox::{append, Append, AppendOutcome};

const ACCOUNT: &str = "ivy";
const CHAT: &str = "android:default";
const NOW_MS: u64 = 1_800_000_000_000;

fn frame(kind: &str, fence: Option<u64>, outboxed: bool) -> Append {
    Append {
        frame: RoutedFrame::new(ACCOUNT, None, format!(r#"{{"type":"{kind}"}}"#)),
        chat_id: CHAT.into(),
        fence,
        effect: None,
        outboxed,
        history: None,
        indexed: None,
    }
}

async fn chat_fence(conn: &mut MultiplexedConnection) -> Option<u64> {
    redis::cmd("HGET")
        .arg(AccountKeys::new(ACCOUNT).outbox_meta())
        .arg(AccountKeys::chat_fence_field(CHAT))
        .query_async(conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_frame_is_published_once_to_its_accounts_channel_in_its_append_and_only_by_the_chats_owner(
) {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let channel = AccountKeys::new(ACCOUNT).live();
    let mut gw_a = redis.pubsub().await;
    gw_a.subscribe(&channel).await.unwrap();
    let mut gw_b = redis.pubsub().await;
    gw_b.subscribe(&channel).await.unwrap();
    let mut gw_a = gw_a.into_on_message();
    let mut gw_b = gw_b.into_on_message();
    let mut next_on_both = async || {
        let mut frames = Vec::new();
        for node in [&mut gw_a, &mut gw_b] {
            let message = tokio::time::timeout(Duration::from_secs(5), node.next())
                .await
                .expect("a message within 5 s")
                .expect("the subscription stays open");
            let text = String::from_utf8(message.get_payload_bytes().to_vec()).unwrap();
            frames.push(delivery::decode(&text).expect("a live message"));
        }
        assert_eq!(frames[0], frames[1], "both nodes get the same frame");
        frames.remove(0)
    };

    // A live-only frame: published without a seq; once the script is loaded, one script
    // call in all.
    let written = append(&mut conn, &frame("message.update", None, false), NOW_MS)
        .await
        .unwrap();
    assert!(matches!(written, AppendOutcome::Written { seq: None, .. }));
    let live = next_on_both().await;
    assert_eq!((live.seq, live.frame_type()), (None, "message.update"));
    let before = command_calls(&mut conn, &["eval", "evalsha", "publish"]).await;
    append(&mut conn, &frame("typing", None, false), NOW_MS)
        .await
        .unwrap();
    assert_eq!(
        command_calls(&mut conn, &["eval", "evalsha", "publish"]).await,
        before + 2,
        "one script call, publishing once"
    );
    assert_eq!(next_on_both().await.frame_type(), "typing");
    assert_eq!(
        chat_fence(&mut conn).await,
        None,
        "an unfenced frame sets no fence"
    );

    // A kept frame of the chat's first owner: raises the fence, published with its seq.
    let AppendOutcome::Written { seq: Some(seq), .. } =
        append(&mut conn, &frame("message", Some(7), true), NOW_MS)
            .await
            .unwrap()
    else {
        panic!("the owner's frame was not kept");
    };
    assert_eq!(chat_fence(&mut conn).await, Some(7));
    let kept = next_on_both().await;
    assert_eq!((kept.seq, kept.frame_type()), (Some(seq), "message"));

    // A newer owner takes over; the old one is refused and publishes nothing: the next
    // message on both channels is the new owner's.
    append(&mut conn, &frame("typing", Some(9), false), NOW_MS)
        .await
        .unwrap();
    assert_eq!(next_on_both().await.frame_type(), "typing");
    assert_eq!(
        append(&mut conn, &frame("message.stale", Some(7), false), NOW_MS)
            .await
            .unwrap(),
        AppendOutcome::Fenced
    );
    assert_eq!(
        append(&mut conn, &frame("message.stale", Some(7), true), NOW_MS)
            .await
            .unwrap(),
        AppendOutcome::Fenced
    );
    append(&mut conn, &frame("message.end", Some(9), true), NOW_MS)
        .await
        .unwrap();
    assert_eq!(next_on_both().await.frame_type(), "message.end");
}

#[tokio::test]
async fn a_chat_fence_kept_in_its_former_key_still_refuses_an_older_writer_and_moves_into_the_meta()
{
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let legacy = AccountKeys::new(ACCOUNT).legacy_chat_fence(CHAT);
    redis::cmd("SET")
        .arg(&legacy)
        .arg(9)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        append(&mut conn, &frame("message", Some(7), true), NOW_MS)
            .await
            .unwrap(),
        AppendOutcome::Fenced
    );
    assert_eq!(
        chat_fence(&mut conn).await,
        None,
        "a refused writer moves nothing"
    );
    let written = append(&mut conn, &frame("message", Some(9), true), NOW_MS)
        .await
        .unwrap();
    assert!(matches!(written, AppendOutcome::Written { seq: Some(_) }));
    assert_eq!(
        chat_fence(&mut conn).await,
        Some(9),
        "the fence is in the meta now"
    );
    let meta_ttl: i64 = redis::cmd("TTL")
        .arg(AccountKeys::new(ACCOUNT).outbox_meta())
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(meta_ttl > 0, "the meta holding the fence expires");
}
