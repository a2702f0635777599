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

/// Field names of a frame's outbox entry, as `scripts/outbox_append.lua` writes it.
mod field {
    pub const FRAME: &str = "f";
    pub const ORIGIN_DEVICE: &str = "o";
    pub const REQUEST_ID: &str = "r";
    pub const TARGET_DEVICE: &str = "t";
    pub const TRACE_PARENT: &str = "tp";
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

    /// Reads the outbox entry of `account` at `seq` from its field/value pairs, taking the
    /// strings over as they are (replays decode thousands of entries a second, so no map
    /// per entry). An empty value counts as absent; `None` without a frame.
    pub fn from_outbox_entry(
        pairs: impl IntoIterator<Item = (String, String)>,
        account: &str,
        seq: u64,
    ) -> Option<Self> {
        let mut frame = Self::new(account, Some(seq), String::new());
        for (name, value) in pairs {
            if value.is_empty() {
                continue;
            }
            match name.as_str() {
                field::FRAME => frame.frame_json = value,
                field::ORIGIN_DEVICE => frame.origin_device = Some(value),
                field::REQUEST_ID => frame.request_id = value.parse().ok(),
                field::TARGET_DEVICE => frame.target_device = Some(value),
                field::TRACE_PARENT => frame.trace_parent = Some(value),
                _ => {}
            }
        }
        (!frame.frame_json.is_empty()).then_some(frame)
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
    fn an_outbox_entry_reads_back_with_its_account_and_seq() {
        let pairs = [
            ("f", r#"{"v":1,"type":"agent.idle","payload":{}}"#),
            ("o", "phone"),
            ("r", "3"),
            ("t", ""),
            (
                "tp",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()));
        let read = RoutedFrame::from_outbox_entry(pairs, "alice", 7);
        let expected = RoutedFrame {
            emitted_us: None,
            ..frame()
        };
        assert_eq!(read, Some(expected));
        let no_frame = [("f".to_owned(), String::new())];
        assert_eq!(RoutedFrame::from_outbox_entry(no_frame, "alice", 7), None);
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
