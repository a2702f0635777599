//! The envelope every frame shares: protocol version and the flat JSON object layout.

use serde::Serialize;

/// The only protocol version this crate speaks; every frame carries it as `"v"`.
pub const PROTOCOL_VERSION: u64 = 1;

/// Borrowed view of a frame in its flat wire shape; `body` contributes `type` and `payload`.
#[derive(Serialize)]
pub(crate) struct OutgoingEnvelope<'a, B: Serialize> {
    pub v: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<&'a str>,
    #[serde(flatten)]
    pub body: &'a B,
}
