//! `search_bench`: the message search index under load. Starts a private `redis-server`,
//! indexes 100,000 generated messages into one account, and measures query latency at
//! 10,000 and at 100,000 indexed messages, to show that a query's cost does not grow with
//! the account's history.
//!
//! Run with `cargo run --release -p iris-tests --bin search_bench`. The corpus comes from a
//! fixed seed: a generated vocabulary drawn with a Zipf distribution (a few very common
//! words, a long tail of rare ones), short user messages and long assistant replies, chats
//! of Zipf-distributed sizes, each with a topic word of its own.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use hdrhistogram::Histogram;
use iris_shared::protocol::enums::Role;
use iris_shared::search::{index_message, search, IndexedMessage};
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;
use redis::aio::MultiplexedConnection;

/// The account every message goes to.
const ACCOUNT: &str = "bench";
/// Messages indexed before the first measurement, and in all.
const SIZES: [usize; 2] = [10_000, 100_000];
/// Distinct words of the generated vocabulary.
const VOCABULARY: usize = 30_000;
/// Chats the messages are spread over.
const CHATS: usize = 60;
/// Index calls in flight at once (as several workers would index).
const INDEX_CONCURRENCY: usize = 32;
/// Measured runs of each query (after as many unmeasured ones, at most 200).
const RUNS: usize = 2_000;
/// Hits asked for, as the gateway asks.
const LIMIT: usize = 50;
/// Seed of the corpus.
const SEED: u64 = 0x1815_c1a5_7e25_0001;

/// SplitMix64: a small, fixed pseudo-random generator, so the corpus never changes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Ranks drawn with probability proportional to `1 / (rank + 1)^exponent`.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, exponent: f64) -> Self {
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|rank| {
                total += 1.0 / ((rank + 1) as f64).powf(exponent);
                total
            })
            .collect::<Vec<_>>();
        Self {
            cumulative: cumulative.iter().map(|c| c / total).collect(),
        }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cumulative
            .partition_point(|&c| c < u)
            .min(self.cumulative.len() - 1)
    }
}

/// The generated corpus: vocabulary by rank (most common first) and message generation.
struct Corpus {
    rng: Rng,
    vocabulary: Vec<String>,
    word_ranks: Zipf,
    chat_ranks: Zipf,
    topics: Vec<String>,
    ts: u64,
}

/// Syllables words are made of (a few non-ASCII ones, so folding and segmentation work).
const SYLLABLES: [&str; 48] = [
    "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "qu", "zo", "an", "el", "or", "un",
    "is", "ba", "fe", "gi", "ho", "ju", "ly", "ne", "po", "ri", "sa", "ti", "wu", "xe", "ce", "de",
    "ma", "ve", "bo", "li", "to", "ga", "ré", "ün", "ße", "mö", "ça", "ná", "sto", "tra", "ple",
    "ght",
];

impl Corpus {
    fn new(seed: u64) -> Self {
        let mut rng = Rng(seed);
        let mut seen = HashSet::new();
        let mut vocabulary = Vec::with_capacity(VOCABULARY + CHATS);
        while vocabulary.len() < VOCABULARY + CHATS {
            let syllables = 1 + rng.below(3) + rng.below(3);
            let word: String = (0..syllables)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if seen.insert(word.clone()) {
                vocabulary.push(word);
            }
        }
        // Common words are short: ranks follow length (stable, so still shuffled within it).
        vocabulary.sort_by_key(|word| word.chars().count());
        // Topic words come from the long tail, one per chat, none shared.
        let mut topics = Vec::with_capacity(CHATS);
        for _ in 0..CHATS {
            topics.push(vocabulary.remove(VOCABULARY / 2 + rng.below(VOCABULARY / 2)));
        }
        Self {
            rng,
            vocabulary,
            word_ranks: Zipf::new(VOCABULARY, 1.0),
            chat_ranks: Zipf::new(CHATS, 1.1),
            topics,
            ts: 1_700_000_000_000,
        }
    }

    /// Message number `n`: a short user message or a long assistant reply.
    fn message(&mut self, n: usize) -> IndexedMessage {
        let chat = self.chat_ranks.sample(&mut self.rng);
        let (role, length) = if n.is_multiple_of(2) {
            (Role::User, 3 + self.rng.below(14))
        } else {
            (Role::Assistant, 20 + self.rng.below(100))
        };
        let mut words: Vec<&str> = (0..length)
            .map(|_| self.vocabulary[self.word_ranks.sample(&mut self.rng)].as_str())
            .collect();
        if self.rng.below(2) == 0 {
            let at = self.rng.below(words.len());
            words[at] = &self.topics[chat];
        }
        let mut text = String::new();
        for (i, word) in words.iter().enumerate() {
            if i == 0 {
                let mut chars = word.chars();
                text.extend(chars.next().into_iter().flat_map(char::to_uppercase));
                text.push_str(chars.as_str());
            } else {
                text.push_str(if self.rng.below(12) == 0 { ", " } else { " " });
                text.push_str(word);
            }
        }
        text.push('.');
        self.ts += 1 + self.rng.below(2_000) as u64;
        IndexedMessage {
            chat_id: format!("android:chat{chat}"),
            thread_id: (self.rng.below(5) == 0).then(|| format!("t{}", n / 50)),
            message_id: format!("m{n}"),
            role,
            text,
            ts: self.ts,
        }
    }
}

/// One measured query.
struct Query {
    label: &'static str,
    text: String,
    chat: Option<String>,
}

/// Latencies and hits of one query at one history size.
struct Measurement {
    hits: usize,
    histogram: Histogram<u64>,
    /// Mean time Redis spent in the search script, per query (µs).
    server_micros: f64,
}

fn queries(corpus: &Corpus) -> Vec<Query> {
    let word = |rank: usize| corpus.vocabulary[rank].clone();
    vec![
        Query {
            label: "rare word",
            text: word(25_000),
            chat: None,
        },
        Query {
            label: "common word",
            text: word(0),
            chat: None,
        },
        Query {
            label: "two words (AND)",
            text: format!("{} {}", word(3), word(12)),
            chat: None,
        },
        Query {
            label: "chat-scoped word",
            text: word(1),
            chat: Some("android:chat20".to_owned()),
        },
        Query {
            label: "prefix (3 chars)",
            text: word(2_000).chars().take(3).collect(),
            chat: None,
        },
        Query {
            label: "worst: disjoint topics",
            text: format!("{} {}", corpus.topics[0], corpus.topics[1]),
            chat: None,
        },
    ]
}

async fn index_range(
    conn: &MultiplexedConnection,
    corpus: &mut Corpus,
    range: std::ops::Range<usize>,
) -> Result<f64> {
    let messages: Vec<IndexedMessage> = range.map(|n| corpus.message(n)).collect();
    let started = Instant::now();
    let mut done = 0;
    for chunk in messages.chunks(10_000) {
        stream::iter(chunk)
            .map(|message| {
                let mut conn = conn.clone();
                async move { index_message(&mut conn, ACCOUNT, message).await }
            })
            .buffer_unordered(INDEX_CONCURRENCY)
            .try_collect::<()>()
            .await
            .context("indexing")?;
        done += chunk.len();
        let rate = done as f64 / started.elapsed().as_secs_f64();
        eprintln!(
            "  indexed {done:>6} / {} ({rate:.0} msgs/s)",
            messages.len()
        );
    }
    Ok(messages.len() as f64 / started.elapsed().as_secs_f64())
}

async fn measure(conn: &mut MultiplexedConnection, query: &Query) -> Result<Measurement> {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
    let mut hits = 0;
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec_async(conn)
        .await?;
    for run in 0..RUNS + RUNS.min(200) {
        let started = Instant::now();
        let found = search(conn, ACCOUNT, &query.text, query.chat.as_deref(), LIMIT).await?;
        let micros = started.elapsed().as_micros() as u64;
        if run >= RUNS.min(200) {
            histogram.record(micros.max(1))?;
        }
        hits = found.len();
    }
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await?;
    let server_micros = stats
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:"))
        .and_then(|fields| {
            fields
                .split(',')
                .find_map(|f| f.strip_prefix("usec_per_call="))
        })
        .and_then(|value| value.parse().ok())
        .context("INFO commandstats has evalsha")?;
    Ok(Measurement {
        hits,
        histogram,
        server_micros,
    })
}

async fn used_memory(conn: &mut MultiplexedConnection) -> Result<u64> {
    let info: String = redis::cmd("INFO").arg("memory").query_async(conn).await?;
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
        .context("INFO memory has used_memory")
}

fn print_table(queries: &[Query], results: &[Vec<Measurement>], rates: &[f64], memory: &[u64]) {
    let ms = |micros: u64| Duration::from_micros(micros).as_secs_f64() * 1_000.0;
    println!();
    println!("| query | text | messages | hits | p50 ms | p99 ms | max ms | Redis ms/query |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (i, query) in queries.iter().enumerate() {
        let scope = query
            .chat
            .as_deref()
            .map(|chat| format!(" in `{chat}`"))
            .unwrap_or_default();
        for (size, at_size) in SIZES.iter().zip(results) {
            let m = &at_size[i];
            let h = &m.histogram;
            println!(
                "| {} | `{}`{scope} | {size} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                query.label,
                query.text,
                m.hits,
                ms(h.value_at_quantile(0.5)),
                ms(h.value_at_quantile(0.99)),
                ms(h.max()),
                m.server_micros / 1_000.0,
            );
        }
    }
    println!();
    let mut from = 0;
    for ((size, rate), bytes) in SIZES.iter().zip(rates).zip(memory) {
        println!(
            "messages {from}..{size}: indexed at {rate:.0} msgs/s ({INDEX_CONCURRENCY} in flight); \
             index then uses {:.1} MiB of Redis memory ({:.0} B/message)",
            *bytes as f64 / (1 << 20) as f64,
            *bytes as f64 / *size as f64
        );
        from = *size;
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let scratch = ScratchDir::new("search-bench");
    let redis = RedisServer::start(scratch.path());
    let client = redis::Client::open(redis.url())?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let mut corpus = Corpus::new(SEED);
    let queries = queries(&corpus);
    let baseline = used_memory(&mut conn).await?;

    let (mut results, mut rates, mut memory) = (Vec::new(), Vec::new(), Vec::new());
    let mut indexed = 0;
    for size in SIZES {
        eprintln!("indexing messages {indexed}..{size}");
        rates.push(index_range(&conn, &mut corpus, indexed..size).await?);
        indexed = size;
        memory.push(used_memory(&mut conn).await?.saturating_sub(baseline));
        let mut at_size = Vec::new();
        for query in &queries {
            eprintln!("  measuring {} ({RUNS} runs)", query.label);
            at_size.push(measure(&mut conn, query).await?);
        }
        results.push(at_size);
    }
    print_table(&queries, &results, &rates, &memory);
    Ok(())
}
