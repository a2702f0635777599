//! Push jobs: the stream `iris:push:jobs` from the workers that outbox frames to the push
//! dispatchers that send notifications.
//!
//! A worker appends one job after outboxing a frame worth waking a device for (an
//! assistant or cron `message`, a `picker.*`, a `notification`). The job names the account,
//! not devices: which devices to push is decided when the job is handled (those with a
//! target and no live session). Dispatchers read the stream with consumer group
//! [`PUSH_GROUP`]; this module owns the entry format.

use redis::aio::ConnectionLike;
use redis::streams::StreamId;
use redis::RedisResult;
use serde::{Deserialize, Serialize};

use crate::keys;

/// Consumer group the push dispatchers read the jobs stream with.
pub const PUSH_GROUP: &str = "pushers";
/// Jobs the stream keeps (at least; trimming is approximate). Far above what running
/// dispatchers leave unread; with no dispatcher at all the stream stays bounded.
pub const PUSH_JOBS_MAX_LEN: u64 = 100_000;
/// Longest title a job carries (characters); notifications show one short line.
pub const TITLE_MAX_CHARS: usize = 120;
/// Longest body a job carries (characters): a notification shows a preview, and FCM and
/// ntfy cap a message at 4 KiB.
pub const BODY_MAX_CHARS: usize = 1_000;
/// Appended to a shortened title or body.
const ELLIPSIS: char = '…';

/// What a job is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PushKind {
    /// A finished assistant (or cron) message.
    Message,
    /// A picker waiting for an answer (approval, model, confirm).
    Picker,
    /// A `notification` frame.
    Notification,
}

impl PushKind {
    /// Its name in a stream entry and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            PushKind::Message => "message",
            PushKind::Picker => "picker",
            PushKind::Notification => "notification",
        }
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        [PushKind::Message, PushKind::Picker, PushKind::Notification]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// One notification to send to the account's offline devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushJob {
    /// Account whose devices are pushed.
    pub account: String,
    /// Chat the frame belongs to (the app opens it from the notification).
    pub chat_id: String,
    /// Outbox seq of the frame; with the device it identifies a push, for de-duplication.
    pub seq: u64,
    /// What the frame is.
    pub kind: PushKind,
    /// Notification title.
    pub title: String,
    /// Notification text.
    pub body: String,
}

/// `text` cut to at most `max_chars` characters, the last of them an ellipsis if cut.
fn shortened(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars.saturating_sub(1)) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => {
            let mut cut = text[..end].to_owned();
            cut.push(ELLIPSIS);
            cut
        }
        _ => text.to_owned(),
    }
}

/// Field names of a push job entry.
mod field {
    pub const ACCOUNT: &str = "a";
    pub const CHAT: &str = "c";
    pub const SEQ: &str = "seq";
    pub const KIND: &str = "k";
    pub const TITLE: &str = "t";
    pub const BODY: &str = "b";
}

impl PushJob {
    /// Reads a job back from a stream entry; `None` if a field is missing or malformed.
    pub fn from_entry(entry: &StreamId) -> Option<Self> {
        let text = |name: &str| entry.get::<String>(name);
        Some(Self {
            account: text(field::ACCOUNT)?,
            chat_id: text(field::CHAT)?,
            seq: text(field::SEQ)?.parse().ok()?,
            kind: PushKind::parse(&text(field::KIND)?)?,
            title: text(field::TITLE).unwrap_or_default(),
            body: text(field::BODY).unwrap_or_default(),
        })
    }
}

/// Appends `job` to the jobs stream (title and body shortened to [`TITLE_MAX_CHARS`] and
/// [`BODY_MAX_CHARS`]). One `XADD`: cheap enough for the chat path.
pub async fn enqueue<C: ConnectionLike + Send>(conn: &mut C, job: &PushJob) -> RedisResult<()> {
    let _id: String = enqueue_command(job).query_async(conn).await?;
    Ok(())
}

/// The `XADD` that queues `job`, for a caller that pipelines it with other writes.
pub fn enqueue_command(job: &PushJob) -> redis::Cmd {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(keys::push_jobs())
        .arg("MAXLEN")
        .arg("~")
        .arg(PUSH_JOBS_MAX_LEN)
        .arg("*")
        .arg(field::ACCOUNT)
        .arg(&job.account)
        .arg(field::CHAT)
        .arg(&job.chat_id)
        .arg(field::SEQ)
        .arg(job.seq)
        .arg(field::KIND)
        .arg(job.kind.as_str())
        .arg(field::TITLE)
        .arg(shortened(&job.title, TITLE_MAX_CHARS))
        .arg(field::BODY)
        .arg(shortened(&job.body, BODY_MAX_CHARS));
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in [PushKind::Message, PushKind::Picker, PushKind::Notification] {
            assert_eq!(PushKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(PushKind::parse("other"), None);
    }

    #[test]
    fn short_texts_are_kept_whole() {
        assert_eq!(shortened("hello", 5), "hello");
        assert_eq!(shortened("", 5), "");
    }

    #[test]
    fn long_texts_end_in_an_ellipsis_within_the_limit() {
        assert_eq!(shortened("hello world", 5), "hell…");
        assert_eq!(shortened("ééééééé", 3), "éé…");
        assert_eq!(shortened("hello world", 5).chars().count(), 5);
    }
}
