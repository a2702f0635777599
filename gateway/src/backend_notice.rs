//! What the backend watch tells the registry, and the registry every session, when Redis
//! becomes unreachable, comes back, or comes back without the cluster's data.

use actix::Message;
use iris_shared::cluster_epoch::LostScope;

/// What changed about the backend, for the registry and from it for every session.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
#[rtype(result = "()")]
pub enum BackendNotice {
    /// Redis is unreachable.
    Degraded,
    /// Redis is reachable again with its data; frames written meanwhile must be caught up.
    Online,
    /// This node's presence holds were written again after its liveness may have lapsed
    /// (other nodes may have skipped it meanwhile): catch up, with no status change.
    PresenceRestored,
    /// This node's live subscription was made (again): frames published while it was not
    /// listening must be caught up, with no status change.
    LiveResumed,
    /// Redis is reachable but lost data (all of it, or one Cluster shard's): the cursors of
    /// the accounts whose state was there must reset to the new head.
    DataLost(LostScope),
}
