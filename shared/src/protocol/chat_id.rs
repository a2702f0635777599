//! The shape of chat ids (`android:<name>`) and the id of the default chat.

/// The chat every device starts in.
pub const DEFAULT_CHAT_ID: &str = "android:default";

const CHAT_ID_PREFIX: &str = "android:";
const MAX_CHAT_NAME_LEN: usize = 64;

/// True when `s` is `android:` followed by 1 to 64 characters of `[A-Za-z0-9_-]`.
pub fn is_valid_chat_id(s: &str) -> bool {
    s.strip_prefix(CHAT_ID_PREFIX).is_some_and(|name| {
        (1..=MAX_CHAT_NAME_LEN).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_chat_id_is_valid() {
        assert!(is_valid_chat_id(DEFAULT_CHAT_ID));
    }

    #[test]
    fn accepts_names_of_letters_digits_underscore_and_dash() {
        assert!(is_valid_chat_id("android:chan_7"));
        assert!(is_valid_chat_id("android:A-b_9"));
        assert!(is_valid_chat_id(&format!("android:{}", "x".repeat(64))));
    }

    #[test]
    fn rejects_wrong_prefix_empty_long_or_odd_characters() {
        assert!(!is_valid_chat_id("ios:default"));
        assert!(!is_valid_chat_id("android:"));
        assert!(!is_valid_chat_id(&format!("android:{}", "x".repeat(65))));
        assert!(!is_valid_chat_id("android:has space"));
        assert!(!is_valid_chat_id("android:a:b"));
        assert!(!is_valid_chat_id("android:é"));
    }
}
