//! Reassembling fragmented WebSocket messages. A client may send one message as a first
//! frame and continuation frames (Chromium does so for large binary messages, such as media
//! chunks), which actix hands over piece by piece as `Message::Continuation`. The session
//! must see whole messages, so the pieces are joined here, held to the same size limit as
//! an unfragmented message.

use actix_http::ws::Item;
use bytes::{Bytes, BytesMut};

/// A message put back together.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Whole {
    /// A text message (its bytes, not yet checked to be UTF-8).
    Text(Bytes),
    /// A binary message.
    Binary(Bytes),
}

/// What one continuation frame amounts to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// More frames of the message are to come.
    Incomplete,
    /// The message's last frame arrived.
    Whole(Whole),
    /// The pieces so far exceed the limit; they are dropped.
    TooBig,
    /// A continuation with no message begun, or a new message inside one: a protocol error.
    OutOfOrder,
}

/// The message being reassembled on one connection, if any.
#[derive(Debug, Default)]
pub(super) struct Fragments {
    started: Option<(bool, BytesMut)>,
}

impl Fragments {
    /// Adds one frame of a fragmented message of at most `limit` bytes.
    pub(super) fn push(&mut self, item: Item, limit: usize) -> Piece {
        let (bytes, last) = match item {
            Item::FirstText(bytes) | Item::FirstBinary(bytes) if self.started.is_some() => {
                drop(bytes);
                self.started = None;
                return Piece::OutOfOrder;
            }
            Item::FirstText(bytes) => {
                self.started = Some((true, BytesMut::new()));
                (bytes, false)
            }
            Item::FirstBinary(bytes) => {
                self.started = Some((false, BytesMut::new()));
                (bytes, false)
            }
            Item::Continue(bytes) => (bytes, false),
            Item::Last(bytes) => (bytes, true),
        };
        let Some((is_text, buffer)) = self.started.as_mut() else {
            return Piece::OutOfOrder;
        };
        if buffer.len() + bytes.len() > limit {
            self.started = None;
            return Piece::TooBig;
        }
        buffer.extend_from_slice(&bytes);
        if !last {
            return Piece::Incomplete;
        }
        let (is_text, whole) = (*is_text, std::mem::take(buffer).freeze());
        self.started = None;
        Piece::Whole(if is_text {
            Whole::Text(whole)
        } else {
            Whole::Binary(whole)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Bytes {
        Bytes::copy_from_slice(text.as_bytes())
    }

    #[test]
    fn pieces_of_a_binary_message_come_out_whole() {
        let mut fragments = Fragments::default();
        assert_eq!(
            fragments.push(Item::FirstBinary(bytes("ab")), 10),
            Piece::Incomplete
        );
        assert_eq!(
            fragments.push(Item::Continue(bytes("cd")), 10),
            Piece::Incomplete
        );
        assert_eq!(
            fragments.push(Item::Last(bytes("e")), 10),
            Piece::Whole(Whole::Binary(bytes("abcde")))
        );
        // The next message starts afresh.
        assert_eq!(
            fragments.push(Item::FirstText(bytes("x")), 10),
            Piece::Incomplete
        );
        assert_eq!(
            fragments.push(Item::Last(bytes("y")), 10),
            Piece::Whole(Whole::Text(bytes("xy")))
        );
    }

    #[test]
    fn a_message_over_the_limit_is_dropped() {
        let mut fragments = Fragments::default();
        assert_eq!(
            fragments.push(Item::FirstBinary(bytes("abcd")), 6),
            Piece::Incomplete
        );
        assert_eq!(
            fragments.push(Item::Continue(bytes("efg")), 6),
            Piece::TooBig
        );
        // Its remaining pieces belong to no message.
        assert_eq!(fragments.push(Item::Last(bytes("h")), 6), Piece::OutOfOrder);
    }

    #[test]
    fn continuations_without_a_first_frame_are_out_of_order() {
        let mut fragments = Fragments::default();
        assert_eq!(
            fragments.push(Item::Continue(bytes("a")), 6),
            Piece::OutOfOrder
        );
        assert_eq!(
            fragments.push(Item::FirstText(bytes("a")), 6),
            Piece::Incomplete
        );
        assert_eq!(
            fragments.push(Item::FirstText(bytes("b")), 6),
            Piece::OutOfOrder
        );
    }
}
