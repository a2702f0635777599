//! The excerpt shown with a hit: about [`SNIPPET_CHARS`] chars around the first match.

use unicode_segmentation::UnicodeSegmentation;

use crate::search::query_terms::QueryTerm;

/// Longest excerpt, in chars (not counting the "…" marks).
pub const SNIPPET_CHARS: usize = 120;
/// Chars of context kept before the first match, when there is that much.
const LEAD_CHARS: usize = 40;
/// How far an edge of the excerpt may move to fall between words instead of inside one.
const SNAP_CHARS: usize = 15;
/// Marks where the excerpt cuts the text.
const ELLIPSIS: char = '…';

/// About [`SNIPPET_CHARS`] chars of `text` around the first word matching any of `terms`
/// (its start, if none does), whitespace runs collapsed to one space, with "…" where the
/// text was cut.
pub fn snippet(text: &str, terms: &[QueryTerm]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let first_match = text
        .unicode_word_indices()
        .find(|(_, word)| {
            let folded = word.to_lowercase();
            terms.iter().any(|term| term.matches(&folded))
        })
        .map_or(0, |(byte, _)| text[..byte].chars().count());

    let mut end = (first_match.saturating_sub(LEAD_CHARS) + SNIPPET_CHARS).min(chars.len());
    let mut start = end.saturating_sub(SNIPPET_CHARS);
    if start > 0 {
        // Start after a space, if one is near and before the match.
        if let Some(space) =
            (start..first_match.min(start + SNAP_CHARS)).find(|&at| chars[at].is_whitespace())
        {
            start = space + 1;
        }
    }
    if end < chars.len() {
        // End at a space, if one is near.
        if let Some(space) = (end.saturating_sub(SNAP_CHARS).max(first_match + 1)..end)
            .rev()
            .find(|&at| chars[at].is_whitespace())
        {
            end = space;
        }
    }

    let mut excerpt = String::with_capacity(SNIPPET_CHARS + 8);
    if start > 0 {
        excerpt.push(ELLIPSIS);
    }
    let mut in_space = false;
    for &c in &chars[start..end] {
        if c.is_whitespace() {
            in_space = true;
            continue;
        }
        if in_space && !excerpt.is_empty() && !excerpt.ends_with(ELLIPSIS) {
            excerpt.push(' ');
        }
        in_space = false;
        excerpt.push(c);
    }
    if end < chars.len() {
        excerpt.push(ELLIPSIS);
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::query_terms::query_terms;

    #[test]
    fn short_text_is_whole_with_whitespace_collapsed() {
        assert_eq!(
            snippet("  Hello\n\n  world  ", &query_terms("world")),
            "Hello world"
        );
    }

    #[test]
    fn long_text_is_cut_around_the_match() {
        let before = "lorem ipsum ".repeat(30);
        let after = " dolor sit amet".repeat(30);
        let text = format!("{before}Needle{after}");
        let excerpt = snippet(&text, &query_terms("needle"));
        assert!(
            excerpt.starts_with('…') && excerpt.ends_with('…'),
            "{excerpt}"
        );
        assert!(excerpt.contains("Needle"), "{excerpt}");
        assert!(excerpt.chars().count() <= SNIPPET_CHARS + 2, "{excerpt}");
        assert!(excerpt.starts_with("…lorem") || excerpt.starts_with("…ipsum"));
    }

    #[test]
    fn match_near_the_end_uses_the_room_before_it() {
        let text = format!("{} the end", "word ".repeat(60));
        let excerpt = snippet(&text, &query_terms("end"));
        assert!(excerpt.ends_with("the end"), "{excerpt}");
        assert!(excerpt.chars().count() > 100, "{excerpt}");
    }

    #[test]
    fn no_match_shows_the_start() {
        let text = "x ".repeat(100);
        let excerpt = snippet(&text, &query_terms("absent"));
        assert!(
            excerpt.starts_with("x x") && excerpt.ends_with('…'),
            "{excerpt}"
        );
    }

    #[test]
    fn matches_case_insensitively_and_by_prefix() {
        let text = format!("{}Café au lait", "a ".repeat(100));
        assert!(snippet(&text, &query_terms("caf")).contains("Café"));
    }
}
