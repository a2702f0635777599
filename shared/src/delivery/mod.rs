//! Frames on their way to devices: the [`RoutedFrame`] that outbox entries and gateway
//! live-channel messages both carry, and the per-gateway-node live channels.
//!
//! A frame is published once on its account's live channel (never once per device or per
//! node); each gateway subscribes, on one connection, to the channels of the accounts whose
//! devices it holds and fans each frame out to their sessions.

mod live_channel;

use crate::protocol::{ServerBody, ServerFrame};
pub use live_channel::{announce_revoked_token, decode, message, message_template};

/// A server frame addressed within one account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutedFrame {
    /// Account whose devices receive the frame.
    pub account: String,
    /// Outbox position; `None` for live-only frames (`message.update`, `tool.progress`, ...).
    pub seq: Option<u64>,
    /// The frame as JSON, without `seq` and `id` (added per device at delivery).
    pub frame_json: String,
    /// Device whose request caused the frame; it receives the frame with `id`.
    pub origin_device: Option<String>,
    /// Request id that the origin device's copy carries.
    pub request_id: Option<u64>,
    /// Only this device receives the frame (e.g. an error answering its request).
    pub target_device: Option<String>,
    /// Not a frame but a notice to gateways: sessions paired with the token of this hash
    /// (see [`crate::tokens`]) must close, the token was revoked.
    pub revoked_token: Option<String>,
    /// W3C `traceparent` of the worker span that wrote the frame, when traced.
    pub trace_parent: Option<String>,
    /// When the worker wrote it (µs since the epoch); set on live deliveries only, for
    /// the delivery-latency histogram.
    pub emitted_us: Option<u64>,
}

/// Field names of a frame's outbox entry.
mod field {
    pub const FRAME: &str = "f";
    pub const ORIGIN_DEVICE: &str = "o";
    pub const REQUEST_ID: &str = "r";
    pub const TARGET_DEVICE: &str = "t";
    pub const SEQ: &str = "s";
    pub const REVOKED_TOKEN: &str = "x";
    /// Only in delivery streams (an outbox key names its account).
    pub const ACCOUNT: &str = "a";
    pub const TRACE_PARENT: &str = "tp";
    pub const EMITTED_US: &str = "e";
}

impl RoutedFrame {
    /// `frame_json` for the devices of `account`, at `seq`, with no addressing beyond that.
    pub fn new(
        account: impl Into<String>,
        seq: Option<u64>,
        frame_json: impl Into<String>,
    ) -> Self {
        Self {
            account: account.into(),
            seq,
            frame_json: frame_json.into(),
            origin_device: None,
            request_id: None,
            target_device: None,
            revoked_token: None,
            trace_parent: None,
            emitted_us: None,
        }
    }

    /// Stream fields of this frame (the account is implied by an outbox key, so it is
    /// written only to delivery streams).
    pub fn fields(&self, with_account: bool) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            (field::FRAME, self.frame_json.clone()),
            (
                field::ORIGIN_DEVICE,
                self.origin_device.clone().unwrap_or_default(),
            ),
            (
                field::REQUEST_ID,
                self.request_id.map(|id| id.to_string()).unwrap_or_default(),
            ),
            (
                field::TARGET_DEVICE,
                self.target_device.clone().unwrap_or_default(),
            ),
            (
                field::SEQ,
                self.seq.map(|seq| seq.to_string()).unwrap_or_default(),
            ),
            (
                field::REVOKED_TOKEN,
                self.revoked_token.clone().unwrap_or_default(),
            ),
        ];
        if with_account {
            fields.push((field::ACCOUNT, self.account.clone()));
        }
        if let Some(trace_parent) = &self.trace_parent {
            fields.push((field::TRACE_PARENT, trace_parent.clone()));
        }
        if let Some(emitted_us) = self.emitted_us {
            fields.push((field::EMITTED_US, emitted_us.to_string()));
        }
        fields
    }

    /// Reads a frame from an entry's field/value pairs, taking the strings over as they are
    /// (replays and deliveries decode thousands of entries a second, so no map per entry).
    /// An empty value counts as absent. `account` fills in for outbox entries (the key
    /// names it), `seq` for outbox entries (their id is the seq).
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (String, String)>,
        account: Option<&str>,
        seq: Option<u64>,
    ) -> Option<Self> {
        let mut frame = Self::new(account.unwrap_or_default(), seq, String::new());
        for (name, value) in pairs {
            if value.is_empty() {
                continue;
            }
            match name.as_str() {
                field::ACCOUNT if account.is_none() => frame.account = value,
                field::SEQ if seq.is_none() => frame.seq = value.parse().ok(),
                field::FRAME => frame.frame_json = value,
                field::ORIGIN_DEVICE => frame.origin_device = Some(value),
                field::REQUEST_ID => frame.request_id = value.parse().ok(),
                field::TARGET_DEVICE => frame.target_device = Some(value),
                field::REVOKED_TOKEN => frame.revoked_token = Some(value),
                field::TRACE_PARENT => frame.trace_parent = Some(value),
                field::EMITTED_US => frame.emitted_us = value.parse().ok(),
                _ => {}
            }
        }
        (!frame.account.is_empty() && !frame.frame_json.is_empty()).then_some(frame)
    }

    /// The frame's `type`, read from its JSON without parsing it (the envelope writes
    /// `type` before the payload, and a quote inside a string value is escaped); `unknown`
    /// if it has none.
    pub fn frame_type(&self) -> &str {
        const KEY: &str = "\"type\":\"";
        self.frame_json
            .find(KEY)
            .map(|at| &self.frame_json[at + KEY.len()..])
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("unknown")
    }

    /// Whether the device `device_id` receives this frame at all.
    pub fn is_for(&self, device_id: &str) -> bool {
        self.target_device
            .as_deref()
            .is_none_or(|target| target == device_id)
    }

    /// The request id the copy for `device_id` carries.
    pub fn request_id_for(&self, device_id: &str) -> Option<u64> {
        match self.origin_device.as_deref() {
            Some(origin) if origin == device_id => self.request_id,
            _ => None,
        }
    }

    /// The frame as `device_id` receives it: with its `seq` and, on the requesting device,
    /// the request `id`. `None` if the frame is not for this device.
    pub fn render_for(&self, device_id: &str) -> Option<String> {
        if !self.is_for(device_id) {
            return None;
        }
        let request_id = self.request_id_for(device_id);
        if let Some(spliced) = splice_envelope(&self.frame_json, self.seq, request_id) {
            return Some(spliced);
        }
        let mut frame: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&self.frame_json).ok()?;
        if let Some(seq) = self.seq {
            frame.insert("seq".into(), seq.into());
        }
        if let Some(id) = self.request_id_for(device_id) {
            frame.insert("id".into(), id.into());
        }
        serde_json::to_string(&frame).ok()
    }
}

/// The frame with `seq` and `id` written in front of its other fields, without parsing it:
/// every delivered and replayed frame goes through here. `None` (parse it instead) unless
/// the JSON is an object that names neither key anywhere (writers strip both, so this is
/// the normal case).
fn splice_envelope(frame_json: &str, seq: Option<u64>, id: Option<u64>) -> Option<String> {
    let rest = frame_json.strip_prefix('{')?;
    if frame_json.contains("\"seq\":") || frame_json.contains("\"id\":") {
        return None;
    }
    let mut out = String::with_capacity(frame_json.len() + 40);
    out.push('{');
    let mut fields = 0;
    for (name, value) in [("seq", seq), ("id", id)] {
        if let Some(value) = value {
            if fields > 0 {
                out.push(',');
            }
            out.push_str(&format!("\"{name}\":{value}"));
            fields += 1;
        }
    }
    if fields > 0 && !rest.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    Some(out)
}

/// How a frame changes the set of an account's chats (so gateways keep their view of it
/// current without asking Redis on every request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelChange {
    /// A chat exists now (its parent, for threads).
    Added {
        /// The chat.
        chat_id: String,
        /// Its parent channel, for a thread.
        parent: Option<String>,
    },
    /// A chat is gone.
    Removed {
        /// The chat.
        chat_id: String,
    },
    /// The complete list of chats (with parents).
    Replaced(Vec<(String, Option<String>)>),
}

impl RoutedFrame {
    /// The change this frame makes to the account's chats, if it is a channel frame.
    pub fn channel_change(&self) -> Option<ChannelChange> {
        if !self.frame_json.contains("\"channel.") {
            return None;
        }
        let frame: ServerFrame = serde_json::from_str(&self.frame_json).ok()?;
        match frame.body {
            ServerBody::ChannelCreated(channel) => Some(ChannelChange::Added {
                chat_id: channel.chat_id?,
                parent: channel.parent_chat_id,
            }),
            ServerBody::ChannelDeleted(deleted) => Some(ChannelChange::Removed {
                chat_id: deleted.chat_id?,
            }),
            ServerBody::ChannelList(list) => Some(ChannelChange::Replaced(
                list.channels?
                    .into_iter()
                    .filter_map(|c| Some((c.chat_id?, c.parent_chat_id)))
                    .collect(),
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> RoutedFrame {
        RoutedFrame {
            account: "alice".into(),
            seq: Some(7),
            frame_json: r#"{"v":1,"type":"agent.idle","payload":{}}"#.into(),
            origin_device: Some("phone".into()),
            request_id: Some(3),
            target_device: None,
            revoked_token: None,
            trace_parent: Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
            emitted_us: Some(1_700_000_000_000_000),
        }
    }

    #[test]
    fn fields_round_trip_through_a_stream_entry() {
        let pairs = frame()
            .fields(true)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v));
        assert_eq!(RoutedFrame::from_pairs(pairs, None, None), Some(frame()));
    }

    #[test]
    fn outbox_entries_take_account_and_seq_from_where_they_are_read() {
        let pairs = frame()
            .fields(false)
            .into_iter()
            .filter(|(k, _)| *k != "s")
            .map(|(k, v)| (k.to_owned(), v));
        let read = RoutedFrame::from_pairs(pairs, Some("alice"), Some(7));
        assert_eq!(read, Some(frame()));
        let no_frame = [
            ("a".to_owned(), "alice".to_owned()),
            ("f".into(), String::new()),
        ];
        assert_eq!(RoutedFrame::from_pairs(no_frame, None, None), None);
        let no_account = [("f".to_owned(), "{}".to_owned())];
        assert_eq!(RoutedFrame::from_pairs(no_account, None, None), None);
    }

    #[test]
    fn the_frame_type_is_read_from_the_envelope() {
        assert_eq!(frame().frame_type(), "agent.idle");
        let built = RoutedFrame {
            frame_json: ServerFrame::new(ServerBody::AgentIdle(Default::default())).to_json(),
            ..frame()
        };
        assert_eq!(built.frame_type(), "agent.idle");
        let bare = RoutedFrame {
            frame_json: "{}".into(),
            ..frame()
        };
        assert_eq!(bare.frame_type(), "unknown");
    }

    #[test]
    fn only_the_origin_device_gets_the_request_id() {
        assert_eq!(frame().request_id_for("phone"), Some(3));
        assert_eq!(frame().request_id_for("tablet"), None);
    }

    #[test]
    fn rendering_adds_seq_everywhere_and_id_on_the_origin_device() {
        let on_origin: serde_json::Value =
            serde_json::from_str(&frame().render_for("phone").unwrap()).unwrap();
        assert_eq!(on_origin["seq"], 7);
        assert_eq!(on_origin["id"], 3);
        let elsewhere: serde_json::Value =
            serde_json::from_str(&frame().render_for("tablet").unwrap()).unwrap();
        assert_eq!(elsewhere["seq"], 7);
        assert!(elsewhere.get("id").is_none());
    }

    #[test]
    fn spliced_rendering_equals_parsed_rendering() {
        for seq in [None, Some(9)] {
            for (device, id) in [("phone", Some(3)), ("tablet", None)] {
                let routed = RoutedFrame { seq, ..frame() };
                let text = routed.render_for(device).unwrap();
                let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(
                    parsed["seq"],
                    seq.map_or(serde_json::Value::Null, Into::into)
                );
                assert_eq!(
                    parsed.get("id").cloned(),
                    id.filter(|_| device == "phone").map(Into::into)
                );
                assert_eq!(parsed["type"], "agent.idle");
            }
        }
        let empty = RoutedFrame {
            frame_json: "{}".into(),
            ..frame()
        };
        assert_eq!(empty.render_for("phone").unwrap(), r#"{"seq":7,"id":3}"#);
        let bare = RoutedFrame {
            frame_json: "{}".into(),
            seq: None,
            origin_device: None,
            ..frame()
        };
        assert_eq!(bare.render_for("phone").unwrap(), "{}");
    }

    #[test]
    fn a_frame_that_already_names_seq_is_parsed_and_keeps_one_seq() {
        let routed = RoutedFrame {
            frame_json: r#"{"v":1,"seq":1,"type":"agent.idle","payload":{}}"#.into(),
            ..frame()
        };
        let parsed: serde_json::Value =
            serde_json::from_str(&routed.render_for("tablet").unwrap()).unwrap();
        assert_eq!(parsed["seq"], 7);
    }

    #[test]
    fn targeted_frames_skip_other_devices() {
        let targeted = RoutedFrame {
            target_device: Some("phone".into()),
            ..frame()
        };
        assert!(targeted.is_for("phone"));
        assert!(!targeted.is_for("tablet"));
        assert!(frame().is_for("tablet"));
    }
}
