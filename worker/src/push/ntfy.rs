//! Sending one notification through an ntfy server (`IRIS_NTFY_URL`, e.g. `https://ntfy.sh`
//! or a self-hosted one): `POST {url}/{topic}` with the text as body and the rest in
//! headers.
//!
//! Headers: `Title`; `Tags` (an emoji by job kind); `Priority: high` for pickers, which
//! wait for the user; `X-Iris-Chat` and `X-Iris-Seq` naming the chat and outbox seq for the
//! app; `Authorization: Bearer` with `IRIS_NTFY_TOKEN` when set. Header values that are not
//! plain ASCII are sent as RFC 2047 encoded words, which ntfy decodes.

use base64::Engine as _;
use iris_shared::push::{PushJob, PushKind};
use iris_shared::redact::Secret;
use reqwest::header::HeaderValue;

use super::retry::SendError;

/// Longest ntfy topic name.
const TOPIC_MAX_LEN: usize = 64;
/// Header naming the chat a notification is about.
pub const CHAT_HEADER: &str = "X-Iris-Chat";
/// Header carrying the outbox seq a notification is about.
pub const SEQ_HEADER: &str = "X-Iris-Seq";

/// An ntfy server.
#[derive(Debug, Clone)]
pub struct Ntfy {
    http: reqwest::Client,
    base_url: String,
    token: Option<Secret>,
}

/// Whether `topic` is a topic name ntfy accepts (`[-_A-Za-z0-9]{1,64}`); anything else could
/// also change the URL's path or query.
fn is_valid_topic(topic: &str) -> bool {
    (1..=TOPIC_MAX_LEN).contains(&topic.len())
        && topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `text` as a header value: one line, RFC 2047-encoded (base64) if not plain ASCII.
fn header_text(text: &str) -> HeaderValue {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.is_ascii() {
        if let Ok(value) = HeaderValue::from_str(&line) {
            return value;
        }
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(line.as_bytes());
    HeaderValue::from_str(&format!("=?UTF-8?B?{encoded}?=")).expect("base64 is ASCII")
}

/// The ntfy tag (an emoji short code) shown for a job of `kind`.
fn tag(kind: PushKind) -> &'static str {
    match kind {
        PushKind::Message => "speech_balloon",
        PushKind::Picker => "question",
        PushKind::Notification => "bell",
    }
}

impl Ntfy {
    /// The server at `url`, authenticated with `token` if given.
    pub fn new(http: reqwest::Client, url: &str, token: Option<Secret>) -> Self {
        Self {
            http,
            base_url: url.trim_end_matches('/').to_owned(),
            token,
        }
    }

    /// Publishes `job` to `topic` (one attempt).
    pub async fn send(&self, topic: &str, job: &PushJob) -> Result<(), SendError> {
        if !is_valid_topic(topic) {
            return Err(SendError::Permanent(format!(
                "invalid ntfy topic {topic:?}"
            )));
        }
        // ntfy replaces an empty message with "triggered"; the title says more.
        let text = if job.body.is_empty() {
            &job.title
        } else {
            &job.body
        };
        let mut request = self
            .http
            .post(format!("{}/{topic}", self.base_url))
            .header("Tags", tag(job.kind))
            .header(CHAT_HEADER, header_text(&job.chat_id))
            .header(SEQ_HEADER, job.seq)
            .body(text.clone());
        if !job.title.is_empty() {
            request = request.header("Title", header_text(&job.title));
        }
        if job.kind == PushKind::Picker {
            request = request.header("Priority", "high");
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token.expose());
        }
        let response = request.send().await.map_err(|e| SendError::transport(&e))?;
        if response.status().is_success() {
            return Ok(());
        }
        Err(SendError::from_response(response).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_plain_names() {
        assert!(is_valid_topic("iris_alice-phone-7f3a"));
        assert!(!is_valid_topic(""));
        assert!(!is_valid_topic("a/b"));
        assert!(!is_valid_topic("a?b"));
        assert!(!is_valid_topic(&"x".repeat(TOPIC_MAX_LEN + 1)));
    }

    #[test]
    fn ascii_header_text_is_sent_as_is_on_one_line() {
        assert_eq!(header_text("Hermes"), "Hermes");
        assert_eq!(header_text("two\r\nlines"), "two  lines");
    }

    #[test]
    fn other_header_text_is_an_encoded_word() {
        assert_eq!(header_text("Héllo"), "=?UTF-8?B?SMOpbGxv?=");
    }
}
