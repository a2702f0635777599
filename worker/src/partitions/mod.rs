//! Partitions, in pipeline order: which inbound partitions this worker owns
//! (`lease_keeper`, with `lease_watch` hearing of released leases), and reading their
//! entries (`inbox`: the one consumer-group read, with takeover of pending entries;
//! `strays`: entries a former owner read after losing its lease).

pub mod inbox;
pub mod lease_confirmations;
pub mod lease_keeper;
pub mod lease_watch;
pub mod strays;
