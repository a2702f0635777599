//! What a query asks for: its words, and whether each also matches longer indexed words.

use crate::search::words::words;

/// Query words used; later ones are ignored (each one costs a posting-list check).
pub const MAX_QUERY_WORDS: usize = 8;
/// Query words of at least this many chars also match indexed words they are a prefix of.
pub const MIN_PREFIX_CHARS: usize = 2;
/// Most indexed words one prefix expands to (the word itself first, then in byte order).
pub const MAX_PREFIX_EXPANSIONS: usize = 16;

/// One word of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    /// The case-folded word.
    pub word: String,
    /// Whether indexed words starting with `word` match too (not only `word` itself).
    pub prefix: bool,
}

impl QueryTerm {
    /// Whether the case-folded indexed word `indexed` matches this term.
    pub fn matches(&self, indexed: &str) -> bool {
        if self.prefix {
            indexed.starts_with(&self.word)
        } else {
            indexed == self.word
        }
    }

    /// The term as the search script takes it: `^word` (prefix) or `=word` (exact).
    pub fn script_arg(&self) -> String {
        let kind = if self.prefix { '^' } else { '=' };
        format!("{kind}{}", self.word)
    }
}

/// The terms of `query`: its first [`MAX_QUERY_WORDS`] distinct words (tokenized like
/// indexed text), each matching as a prefix once it has [`MIN_PREFIX_CHARS`] chars.
pub fn query_terms(query: &str) -> Vec<QueryTerm> {
    words(query)
        .into_iter()
        .take(MAX_QUERY_WORDS)
        .map(|word| QueryTerm {
            prefix: word.chars().count() >= MIN_PREFIX_CHARS,
            word,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_words_match_exactly_longer_ones_as_prefixes() {
        let terms = query_terms("A Caf");
        assert_eq!(terms[0].script_arg(), "=a");
        assert_eq!(terms[1].script_arg(), "^caf");
        assert!(terms[1].matches("café"));
        assert!(!terms[0].matches("and"));
        assert!(terms[0].matches("a"));
    }

    #[test]
    fn keeps_at_most_the_first_words() {
        let query = (0..20)
            .map(|n| format!("w{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        let terms = query_terms(&query);
        assert_eq!(terms.len(), MAX_QUERY_WORDS);
        assert_eq!(terms[0].word, "w0");
    }
}
