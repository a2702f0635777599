//! What the backend watch tells the registry, and the registry every session, when Redis
//! becomes unreachable, comes back, or comes back without the cluster's data.

use actix::Message;

/// What changed about the backend, for the registry and from it for every session.
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
#[rtype(result = "()")]
pub enum BackendNotice {
    /// Redis is unreachable.
    Degraded,
    /// Redis is reachable again with its data; frames written meanwhile must be caught up.
    Online,
    /// Redis is reachable but lost the cluster's data: cursors must reset to the new head.
    DataLost,
}
