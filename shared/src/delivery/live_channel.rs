//! The live channel of each account (`iris:{a:A}:live`, Redis Pub/Sub): a written frame is
//! published once on it, by the append script itself, and every gateway node holding a
//! device of the account has subscribed to it (one connection per node for all of them).
//!
//! Pub/Sub keeps nothing, and need not: every frame a device must not lose is in the
//! account's outbox first, under its seq. A node that was not subscribed for a while (a
//! reconnect, a failover) tells its sessions to catch up from the outbox once subscribed
//! again, and a frame that went missing otherwise shows up as a seq gap the session fills.
//!
//! A message is `<seq>\n<addressing JSON>\n<frame JSON>`: the writer prepares everything but
//! the seq ([`message_template`]), which the script puts in front once it has assigned it.

use serde::{Deserialize, Serialize};

use super::RoutedFrame;
use crate::keys::AccountKeys;

/// A frame's addressing on a live channel (the frame JSON follows it).
#[derive(Serialize, Deserialize, Default)]
struct Addressing {
    #[serde(rename = "a")]
    account: String,
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    origin_device: Option<String>,
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    request_id: Option<u64>,
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    target_device: Option<String>,
    #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
    revoked_token: Option<String>,
    #[serde(rename = "tp", default, skip_serializing_if = "Option::is_none")]
    trace_parent: Option<String>,
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    emitted_us: Option<u64>,
}

/// `frame` as a live-channel message without its seq: what follows the seq's line.
pub fn message_template(frame: &RoutedFrame) -> String {
    let addressing = Addressing {
        account: frame.account.clone(),
        origin_device: frame.origin_device.clone(),
        request_id: frame.request_id,
        target_device: frame.target_device.clone(),
        revoked_token: frame.revoked_token.clone(),
        trace_parent: frame.trace_parent.clone(),
        emitted_us: frame.emitted_us,
    };
    let head = serde_json::to_string(&addressing).expect("addressing always serializes");
    let mut message = String::with_capacity(head.len() + frame.frame_json.len() + 1);
    message.push_str(&head);
    message.push('\n');
    message.push_str(&frame.frame_json);
    message
}

/// `frame` as a live-channel message, its seq included.
pub fn message(frame: &RoutedFrame) -> String {
    let seq = frame.seq.map(|seq| seq.to_string()).unwrap_or_default();
    format!("{seq}\n{}", message_template(frame))
}

/// Reads a live-channel message; `None` if it does not read as one.
pub fn decode(message: &str) -> Option<RoutedFrame> {
    let (seq, rest) = message.split_once('\n')?;
    let (head, frame_json) = rest.split_once('\n')?;
    let addressing: Addressing = serde_json::from_str(head).ok()?;
    if addressing.account.is_empty() || frame_json.is_empty() {
        return None;
    }
    Some(RoutedFrame {
        account: addressing.account,
        seq: seq.parse().ok(),
        frame_json: frame_json.to_owned(),
        origin_device: addressing.origin_device,
        request_id: addressing.request_id,
        target_device: addressing.target_device,
        revoked_token: addressing.revoked_token,
        trace_parent: addressing.trace_parent,
        emitted_us: addressing.emitted_us,
    })
}

/// Tells the gateway nodes holding devices of `account` that the token with hash
/// `token_hash` is revoked, so they close the sessions paired with it.
pub async fn announce_revoked_token<C: redis::aio::ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_hash: &str,
) -> redis::RedisResult<()> {
    let notice = RoutedFrame {
        revoked_token: Some(token_hash.to_owned()),
        ..RoutedFrame::new(account, None, "{}")
    };
    redis::cmd("PUBLISH")
        .arg(AccountKeys::new(account).live())
        .arg(message(&notice))
        .query_async(conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_as_the_frame_it_was_made_of() {
        let frame = RoutedFrame {
            origin_device: Some("phone\nwith a newline".into()),
            request_id: Some(7),
            trace_parent: Some("00-abc-def-01".into()),
            emitted_us: Some(42),
            ..RoutedFrame::new("acct", Some(99), "{\"type\":\"message\",\"t\":\"a\\nb\"}")
        };
        assert_eq!(decode(&message(&frame)), Some(frame.clone()));
        let live = RoutedFrame { seq: None, ..frame };
        assert_eq!(decode(&message(&live)), Some(live));
    }

    #[test]
    fn a_message_without_addressing_or_frame_is_refused() {
        assert_eq!(decode("5\n{}\n{\"type\":\"x\"}"), None);
        assert_eq!(decode("5\n{\"a\":\"acct\"}\n"), None);
        assert_eq!(decode("garbage"), None);
    }
}
