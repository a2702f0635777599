//! How settings that may carry a secret are shown in logs, errors and startup lines: a
//! URL keeps its scheme, user, hosts and path, and loses its password and any
//! credential-like query parameter. Every place that prints a configured URL goes through
//! [`url`], so no Redis, upstream or push password reaches a log. Keys and tokens are
//! held as [`Secret`], whose `Debug` shows nothing of them.

use std::sync::Arc;

/// What replaces a hidden value.
pub const MASK: &str = "***";

/// Query parameters whose values are credentials (matched case-insensitively).
const SECRET_PARAMS: &[&str] = &[
    "password",
    "pass",
    "passwd",
    "pwd",
    "token",
    "access_token",
    "auth",
    "key",
    "api_key",
    "apikey",
    "secret",
];

/// A key or token from the configuration (admin key, upstream key, push token). Its
/// `Debug` is a mask, so a settings struct logged whole, or a panic message, does not
/// carry it; [`Secret::expose`] is the one way to the value, at the place that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// The value itself, for the header or comparison that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether it is empty or blank (an empty variable counts as unset).
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value.into())
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.into())
    }
}

/// `raw` with its credentials masked: `redis://user:pw@host` becomes
/// `redis://user:***@host`, `https://token@host` becomes `https://***@host`, and
/// `?password=pw` becomes `?password=***`. A value that is not a URL is masked whole: it
/// cannot be told apart from a secret put in the wrong place.
pub fn url(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return MASK.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        // A user alone may be a token (`https://TOKEN@host`), so it goes too.
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) if !user.is_empty() => format!("{user}:{MASK}@{hosts}"),
            _ => format!("{MASK}@{hosts}"),
        },
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{}", masked_query(tail))
}

/// `tail` (path, query, fragment) with the values of credential-like query parameters
/// masked.
fn masked_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_secret_param(name) => format!("{name}={MASK}"),
            _ => pair.to_owned(),
        })
        .collect();
    let mut shown = format!("{path}?{}", pairs.join("&"));
    if let Some(fragment) = fragment {
        shown.push('#');
        shown.push_str(fragment);
    }
    shown
}

/// `text` (an error message, say) with the credentials of every URL in it masked: HTTP
/// clients and drivers quote the URL they failed on, password included.
pub fn in_text(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let url_end = rest[at..]
            .find(|c: char| c.is_whitespace() || "()<>\"'`,;".contains(c))
            .map_or(rest.len(), |i| at + i);
        shown.push_str(&rest[..scheme_start]);
        shown.push_str(&url(&rest[scheme_start..url_end]));
        rest = &rest[url_end..];
    }
    shown.push_str(rest);
    shown
}

fn is_secret_param(name: &str) -> bool {
    SECRET_PARAMS
        .iter()
        .any(|secret| secret.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_urls_of_every_scheme_lose_their_password_and_keep_the_rest() {
        for (raw, shown) in [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            (
                "redis://:hunter2@10.0.0.1:6379/2",
                "redis://***@10.0.0.1:6379/2",
            ),
            (
                "rediss://iris:hunter2@redis.example:6380",
                "rediss://iris:***@redis.example:6380",
            ),
            (
                "redis+sentinel://iris:hunter2@s1:26379,s2:26379/mymaster",
                "redis+sentinel://iris:***@s1:26379,s2:26379/mymaster",
            ),
            (
                "rediss+cluster://iris:hunter2@n1:7000,n2:7000",
                "rediss+cluster://iris:***@n1:7000,n2:7000",
            ),
        ] {
            assert_eq!(url(raw), shown, "{raw}");
        }
    }

    #[test]
    fn a_password_holding_at_signs_or_colons_is_hidden_whole() {
        let shown = url("redis://iris:p@ss:w@rd@host:6379");
        assert_eq!(shown, "redis://iris:***@host:6379");
    }

    #[test]
    fn a_user_alone_is_hidden_because_it_may_be_a_token() {
        assert_eq!(
            url("https://ghp_abc@api.example/v1"),
            "https://***@api.example/v1"
        );
    }

    #[test]
    fn credential_query_parameters_are_hidden_and_others_kept() {
        assert_eq!(
            url("https://llm.example/v1?api_key=sk-1&model=m&Password=x#top"),
            "https://llm.example/v1?api_key=***&model=m&Password=***#top"
        );
    }

    #[test]
    fn every_url_quoted_in_a_message_loses_its_credentials() {
        assert_eq!(
            in_text("error sending request for url (http://u:pw@h:1/v1/models): refused"),
            "error sending request for url (http://u:***@h:1/v1/models): refused"
        );
        assert_eq!(
            in_text("a redis://:pw@a:1 and rediss://b:2, done"),
            "a redis://***@a:1 and rediss://b:2, done"
        );
        assert_eq!(in_text("no url here"), "no url here");
    }

    #[test]
    fn a_secret_debugs_as_the_mask() {
        let secret = Secret::from("sk-live-1");
        assert_eq!(format!("{secret:?} {:?}", Some(&secret)), "*** Some(***)");
        assert_eq!(secret.expose(), "sk-live-1");
    }

    #[test]
    fn a_value_that_is_not_a_url_is_hidden_whole() {
        assert_eq!(url("hunter2"), MASK);
    }
}
