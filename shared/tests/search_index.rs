//! Integration tests of the message search index against a private, real `redis-server`.

mod support;

use support::Redis;

use redis::aio::MultiplexedConnection;

use iris_shared::keys::AccountKeys;
use iris_shared::protocol::enums::Role;
use iris_shared::protocol::server::SearchHit;
use iris_shared::search::{index_message, remove_chat, search, IndexedMessage, WORK_BUDGET};

const ACCOUNT: &str = "alice";
const CHAT: &str = "android:default";

fn message(chat_id: &str, message_id: &str, text: &str, ts: u64) -> IndexedMessage {
    IndexedMessage {
        chat_id: chat_id.to_owned(),
        thread_id: None,
        message_id: message_id.to_owned(),
        role: Role::User,
        text: text.to_owned(),
        ts,
    }
}

async fn index_all(conn: &mut MultiplexedConnection, account: &str, messages: &[IndexedMessage]) {
    for message in messages {
        index_message(conn, account, message).await.unwrap();
    }
}

async fn ids(conn: &mut MultiplexedConnection, query: &str, chat: Option<&str>) -> Vec<String> {
    search(conn, ACCOUNT, query, chat, 50)
        .await
        .unwrap()
        .into_iter()
        .map(|hit| hit.message_id.unwrap())
        .collect()
}

#[tokio::test]
async fn exact_words_and_all_words_of_a_query_match() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    index_all(
        &mut conn,
        ACCOUNT,
        &[
            message(CHAT, "m1", "The quick brown fox", 1),
            message(CHAT, "m2", "the lazy dog", 2),
            message(CHAT, "m3", "A quick dog, at last.", 3),
        ],
    )
    .await;
    assert_eq!(ids(&mut conn, "quick", None).await, ["m3", "m1"]);
    assert_eq!(ids(&mut conn, "dog", None).await, ["m3", "m2"]);
    assert_eq!(ids(&mut conn, "quick dog", None).await, ["m3"]);
    assert_eq!(ids(&mut conn, "DOG  quick!", None).await, ["m3"]);
    assert!(ids(&mut conn, "quick cat", None).await.is_empty());
    assert!(ids(&mut conn, "", None).await.is_empty());
    assert!(ids(&mut conn, " ,;", None).await.is_empty());
}

#[tokio::test]
async fn longer_query_words_also_match_as_prefixes() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    index_all(
        &mut conn,
        ACCOUNT,
        &[
            message(CHAT, "m1", "I like running", 1),
            message(CHAT, "m2", "a runner and a run", 2),
            message(CHAT, "m3", "run, run, running", 3),
            message(CHAT, "m4", "rural", 4),
        ],
    )
    .await;
    // One hit per message, newest first, even when several of its words match.
    assert_eq!(ids(&mut conn, "run", None).await, ["m3", "m2", "m1"]);
    assert_eq!(ids(&mut conn, "runn", None).await, ["m3", "m2", "m1"]);
    assert_eq!(ids(&mut conn, "ru", None).await, ["m4", "m3", "m2", "m1"]);
    assert_eq!(ids(&mut conn, "runni", None).await, ["m3", "m1"]);
    // A one-char word matches only itself.
    assert_eq!(ids(&mut conn, "a", None).await, ["m2"]);
    assert!(ids(&mut conn, "r", None).await.is_empty());
}

#[tokio::test]
async fn case_and_unicode_are_folded_and_segmented() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    index_all(
        &mut conn,
        ACCOUNT,
        &[
            message(CHAT, "fr", "Un Café au lait, s'il vous plaît", 1),
            message(CHAT, "de", "Die STRASSE ist schön, die Straße auch", 2),
            message(CHAT, "ja", "昨日は東京タワーに行きました。", 3),
        ],
    )
    .await;
    assert_eq!(ids(&mut conn, "café", None).await, ["fr"]);
    assert_eq!(ids(&mut conn, "CAFÉ", None).await, ["fr"]);
    assert_eq!(ids(&mut conn, "straße", None).await, ["de"]);
    assert_eq!(ids(&mut conn, "Schön strasse", None).await, ["de"]);
    assert_eq!(ids(&mut conn, "タワー", None).await, ["ja"]);
    assert_eq!(ids(&mut conn, "東京", None).await, ["ja"]);
    assert!(ids(&mut conn, "大阪", None).await.is_empty());
}

#[tokio::test]
async fn hits_are_newest_first_and_limited() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    // Written out of order: the index orders by ts, not by arrival.
    let mut messages: Vec<IndexedMessage> = (0..40u64)
        .map(|n| {
            let ts = 1_000 + (n * 37) % 40;
            message(CHAT, &format!("m{ts}"), &format!("common word {n}"), ts)
        })
        .collect();
    messages.push(message(CHAT, "other", "unrelated", 5_000));
    index_all(&mut conn, ACCOUNT, &messages).await;

    let hits = search(&mut conn, ACCOUNT, "common", None, 10)
        .await
        .unwrap();
    let ts: Vec<u64> = hits.iter().map(|hit| hit.ts.unwrap()).collect();
    assert_eq!(ts, (1_030..1_040).rev().collect::<Vec<_>>());
    let all = search(&mut conn, ACCOUNT, "common word", None, 50)
        .await
        .unwrap();
    assert_eq!(all.len(), 40);
    assert!(all.windows(2).all(|pair| pair[0].ts > pair[1].ts));
    assert!(search(&mut conn, ACCOUNT, "common", None, 0)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn chat_filter_restricts_to_one_chat() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    index_all(
        &mut conn,
        ACCOUNT,
        &[
            message("android:default", "a1", "deploy the cluster", 1),
            message("android:work", "w1", "deploy on friday", 2),
            message("android:work", "w2", "never deploy on friday", 3),
            message("android:default", "a2", "nothing here", 4),
        ],
    )
    .await;
    assert_eq!(ids(&mut conn, "deploy", None).await, ["w2", "w1", "a1"]);
    assert_eq!(
        ids(&mut conn, "deploy", Some("android:work")).await,
        ["w2", "w1"]
    );
    assert_eq!(
        ids(&mut conn, "deploy", Some("android:default")).await,
        ["a1"]
    );
    assert!(ids(&mut conn, "deploy", Some("android:none"))
        .await
        .is_empty());
    assert!(ids(&mut conn, "friday", Some("android:default"))
        .await
        .is_empty());
}

#[tokio::test]
async fn accounts_are_isolated() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    index_message(&mut conn, "alice", &message(CHAT, "m1", "secret plans", 1))
        .await
        .unwrap();
    index_message(&mut conn, "bob", &message(CHAT, "m1", "public plans", 2))
        .await
        .unwrap();
    let bob = search(&mut conn, "bob", "plans", None, 50).await.unwrap();
    assert_eq!(bob.len(), 1);
    assert_eq!(bob[0].snippet.as_deref(), Some("public plans"));
    assert!(search(&mut conn, "bob", "secret", None, 50)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(ids(&mut conn, "plans", None).await, ["m1"]);
    assert_eq!(remove_chat(&mut conn, "bob", CHAT).await.unwrap(), 1);
    assert_eq!(ids(&mut conn, "secret", None).await, ["m1"]);

    // Every key carries its account's hash tag; of bob, only his ref counter is left.
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    let (bob, alice): (Vec<String>, Vec<String>) = keys
        .into_iter()
        .partition(|key| key.starts_with("iris:{a:bob}:"));
    assert_eq!(bob, [AccountKeys::new("bob").search_next()]);
    assert!(!alice.is_empty());
    assert!(
        alice.iter().all(|key| key.starts_with("iris:{a:alice}:")),
        "{alice:?}"
    );
}

#[tokio::test]
async fn indexing_a_message_again_changes_nothing() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let first = IndexedMessage {
        thread_id: Some("t1".to_owned()),
        role: Role::Assistant,
        ..message(CHAT, "m1", "hello indexed world", 42)
    };
    index_message(&mut conn, ACCOUNT, &first).await.unwrap();
    let before = search(&mut conn, ACCOUNT, "hello", None, 50).await.unwrap();
    let size_before: u64 = redis::cmd("DBSIZE").query_async(&mut conn).await.unwrap();
    let next_before: u64 = redis::cmd("GET")
        .arg(AccountKeys::new(ACCOUNT).search_next())
        .query_async(&mut conn)
        .await
        .unwrap();

    index_message(&mut conn, ACCOUNT, &first).await.unwrap();
    let changed = IndexedMessage {
        text: "hello other words".to_owned(),
        ts: 43,
        ..first.clone()
    };
    index_message(&mut conn, ACCOUNT, &changed).await.unwrap();

    let after = search(&mut conn, ACCOUNT, "hello", None, 50).await.unwrap();
    assert_eq!(after, before);
    assert_eq!(
        after,
        [SearchHit {
            message_id: Some("m1".to_owned()),
            chat_id: Some(CHAT.to_owned()),
            thread_id: Some("t1".to_owned()),
            role: Some(Role::Assistant),
            snippet: Some("hello indexed world".to_owned()),
            ts: Some(42),
        }]
    );
    let size_after: u64 = redis::cmd("DBSIZE").query_async(&mut conn).await.unwrap();
    let next_after: u64 = redis::cmd("GET")
        .arg(AccountKeys::new(ACCOUNT).search_next())
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!((size_after, next_after), (size_before, next_before));
    assert!(ids(&mut conn, "other", None).await.is_empty());
}

#[tokio::test]
async fn remove_chat_removes_its_hits_and_only_them() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let keys = AccountKeys::new(ACCOUNT);
    // More than one removal batch.
    let doomed: Vec<IndexedMessage> = (0..450u64)
        .map(|n| {
            message(
                "android:old",
                &format!("o{n}"),
                &format!("shared doomed {n}"),
                n,
            )
        })
        .collect();
    index_all(&mut conn, ACCOUNT, &doomed).await;
    index_message(
        &mut conn,
        ACCOUNT,
        &message(CHAT, "k1", "shared kept", 1_000),
    )
    .await
    .unwrap();

    assert_eq!(
        remove_chat(&mut conn, ACCOUNT, "android:old")
            .await
            .unwrap(),
        450
    );
    assert_eq!(ids(&mut conn, "shared", None).await, ["k1"]);
    assert!(ids(&mut conn, "doomed", None).await.is_empty());
    assert!(ids(&mut conn, "shared", Some("android:old"))
        .await
        .is_empty());
    assert_eq!(
        remove_chat(&mut conn, ACCOUNT, "android:old")
            .await
            .unwrap(),
        0
    );

    // Nothing of the chat is left: no postings, no ids, no records, no lexicon entries.
    let lexicon: Vec<String> = redis::cmd("ZRANGE")
        .arg(keys.search_lexicon())
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(lexicon, ["kept", "shared"]);
    let fields: u64 = redis::cmd("HLEN")
        .arg(keys.search_docs())
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(fields, 3, "the kept message's record, words and id");
    let leftovers: u64 = redis::cmd("EXISTS")
        .arg(keys.search_chat("android:old"))
        .arg(keys.search_ids("android:old"))
        .arg(keys.search_word("doomed"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(leftovers, 0);

    // A removed message may be indexed again.
    index_all(&mut conn, ACCOUNT, &doomed[..1]).await;
    assert_eq!(ids(&mut conn, "doomed", None).await, ["o0"]);
}

#[tokio::test]
async fn snippet_shows_the_text_around_the_first_match() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let text = format!(
        "{} The needle is here. {}",
        "Some long preamble about nothing.".repeat(10),
        "And a long tail after it.".repeat(10)
    );
    index_message(&mut conn, ACCOUNT, &message(CHAT, "m1", &text, 1))
        .await
        .unwrap();
    let hits = search(&mut conn, ACCOUNT, "NEEDLE", None, 50)
        .await
        .unwrap();
    let snippet = hits[0].snippet.as_deref().unwrap();
    assert!(snippet.contains("The needle is here."), "{snippet}");
    assert!(
        snippet.starts_with('…') && snippet.ends_with('…'),
        "{snippet}"
    );
    assert!(snippet.chars().count() <= 122, "{snippet}");
}

#[tokio::test]
async fn a_query_stops_at_its_work_budget() {
    let redis = Redis::start();
    let conn = redis.connect().await;
    // Two words in 0.6 × budget messages each, never together, except in the newest and the
    // oldest message: the driving list is longer than the budget lets a query examine.
    let each = WORK_BUDGET as u64 * 6 / 10;
    let mut messages = vec![
        message(CHAT, "oldest", "alpha beta", 1),
        message(CHAT, "newest", "alpha beta", 10 * each),
    ];
    for n in 0..each {
        messages.push(message(CHAT, &format!("a{n}"), "alpha", 2 * each + n));
        messages.push(message(CHAT, &format!("b{n}"), "beta", 4 * each + n));
    }
    let mut tasks = tokio::task::JoinSet::new();
    for chunk in messages.chunks(messages.len() / 8 + 1) {
        let (mut conn, chunk) = (conn.clone(), chunk.to_vec());
        tasks.spawn(async move { index_all(&mut conn, ACCOUNT, &chunk).await });
    }
    tasks.join_all().await;

    let mut conn = conn;
    assert_eq!(ids(&mut conn, "alpha beta", None).await, ["newest"]);
    assert_eq!(ids(&mut conn, "alpha beta", Some(CHAT)).await, ["newest"]);
    // Once the message is no longer behind the budget, it is found.
    assert_eq!(
        remove_chat(&mut conn, ACCOUNT, CHAT).await.unwrap(),
        2 * each + 2
    );
    index_all(&mut conn, ACCOUNT, &messages[..1]).await;
    assert_eq!(ids(&mut conn, "alpha beta", None).await, ["oldest"]);
}

#[tokio::test]
async fn a_message_of_thousands_of_words_is_indexed_whole_with_its_lexicon() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let text: Vec<String> = (0..3_000).map(|n| format!("word{n:04}")).collect();
    index_all(
        &mut conn,
        ACCOUNT,
        &[message(CHAT, "long", &text.join(" "), 1_000)],
    )
    .await;
    for word in ["word0000", "word1999", "word2000", "word2999"] {
        assert_eq!(ids(&mut conn, word, None).await, vec!["long"], "{word}");
    }
    let lexicon: u64 = redis::cmd("ZCARD")
        .arg(AccountKeys::new(ACCOUNT).search_lexicon())
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(lexicon, 3_000);
}

#[tokio::test]
async fn remove_chat_also_removes_messages_indexed_with_words_and_ids_in_their_former_keys() {
    let redis = Redis::start();
    let mut conn = redis.connect().await;
    let keys = AccountKeys::new(ACCOUNT);
    let (chat, reference) = ("android:legacy", "1700000000000:5");
    redis::pipe()
        .cmd("HSET")
        .arg(keys.search_docs())
        .arg(reference)
        .arg("{}")
        .cmd("HSET")
        .arg(keys.search_terms())
        .arg(reference)
        .arg("ancient\nm-old")
        .cmd("HSET")
        .arg(keys.search_ids(chat))
        .arg("m-old")
        .arg(reference)
        .cmd("ZADD")
        .arg(keys.search_chat(chat))
        .arg(1_700_000_000_000_u64)
        .arg(reference)
        .cmd("ZADD")
        .arg(keys.search_word("ancient"))
        .arg(1_700_000_000_000_u64)
        .arg(reference)
        .cmd("ZADD")
        .arg(keys.search_lexicon())
        .arg(0)
        .arg("ancient")
        .query_async::<()>(&mut conn)
        .await
        .unwrap();

    assert_eq!(remove_chat(&mut conn, ACCOUNT, chat).await.unwrap(), 1);
    let left: u64 = redis::cmd("EXISTS")
        .arg(keys.search_docs())
        .arg(keys.search_terms())
        .arg(keys.search_ids(chat))
        .arg(keys.search_chat(chat))
        .arg(keys.search_word("ancient"))
        .arg(keys.search_lexicon())
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0, "every trace of the old message is gone");
}
