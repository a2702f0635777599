//! The per-account message search index: an inverted index built from plain Redis
//! structures (Redis 7, no search module), all under the account's hash tag.
//!
//! Every indexed message gets a *search ref*, `<ts as 13 digits>:<n>`, that sorts by time
//! as a string. Each distinct word of the message adds the ref to that word's posting
//! list, a sorted set scored by the message's timestamp; the chat keeps one more such
//! list, and the message's record (ids, role, ts, text) sits in one hash by ref. A query
//! walks the smallest posting list newest first and checks the other words with
//! `ZMSCORE`, in one Lua script, touching about [`WORK_BUDGET`] postings at most: its cost
//! depends on the limit and that budget, never on how many messages the account has. The
//! key layout is in [`crate::keys`], the cost model in `docs/performance.md` ("Search").
//!
//! Query words of two or more chars also match indexed words they start (up to 16 such
//! words each, see [`query_terms()`]); shorter ones match exactly.
//!
//! # Layout
//! - [`words`](mod@words): the tokenizer (Unicode words, case-folded, de-duplicated).
//! - [`query_terms`](mod@query_terms): what a query asks for: its words and whether each matches as a prefix.
//! - [`record`]: the message to index and the record stored for it.
//! - [`snippet`](mod@snippet): the excerpt around the first match.
//! - [`index`]: adding a message, and removing a chat.
//! - [`query`]: running a search.

pub mod index;
pub mod query;
pub mod query_terms;
pub mod record;
pub mod snippet;
pub mod words;

pub(crate) use index::add_index_arguments;
pub use index::{index_message, remove_chat, MAX_WORDS_PER_MESSAGE};
pub use query::{search, MAX_LIMIT, WORK_BUDGET};
pub use query_terms::{query_terms, QueryTerm};
pub use record::{IndexedMessage, MAX_STORED_TEXT_BYTES};
pub use snippet::snippet;
pub use words::{words, MAX_WORD_CHARS};
