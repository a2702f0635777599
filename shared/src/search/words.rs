//! The tokenizer shared by indexing and querying: Unicode words, case-folded, de-duplicated.

use std::collections::HashSet;

use unicode_segmentation::UnicodeSegmentation;

/// Longest word (in chars) that is indexed or searched; longer ones are ignored.
pub const MAX_WORD_CHARS: usize = 64;

/// The distinct words of `text`, in order of first appearance: Unicode word segmentation
/// (UAX #29, so German compounds stay whole and Japanese splits into script runs and
/// ideographs), lower-cased, without words longer than [`MAX_WORD_CHARS`].
pub fn words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    text.unicode_words()
        .filter(|word| word.chars().count() <= MAX_WORD_CHARS)
        .map(str::to_lowercase)
        // The index separates stored words with spaces and newlines; UAX #29 never puts
        // whitespace inside a word, but the index must not depend on that.
        .filter(|word| !word.contains(char::is_whitespace))
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_and_deduplicates() {
        assert_eq!(words("Café, CAFÉ and café!"), ["café", "and"]);
    }

    #[test]
    fn keeps_punctuation_out_and_numbers_in() {
        assert_eq!(
            words("Hello, world: it's 3.14 (pi)"),
            ["hello", "world", "it's", "3.14", "pi"]
        );
    }

    #[test]
    fn segments_german_and_japanese() {
        assert_eq!(
            words("Die Straße ist schön"),
            ["die", "straße", "ist", "schön"]
        );
        let japanese = words("東京タワーに行きました");
        assert!(japanese.contains(&"東".to_owned()), "{japanese:?}");
        assert!(japanese.contains(&"タワー".to_owned()), "{japanese:?}");
    }

    #[test]
    fn ignores_overlong_words() {
        let long = "x".repeat(MAX_WORD_CHARS + 1);
        let edge = "y".repeat(MAX_WORD_CHARS);
        assert_eq!(words(&format!("{long} {edge} z")), [edge.as_str(), "z"]);
    }
}
