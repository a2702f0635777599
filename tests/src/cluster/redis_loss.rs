//! Data a Redis shard loses, shown by rewriting its keys the way the server that comes
//! back presents them: an outbox whose tail a promoted replica never received, and a
//! partition's lease and fencing-token counter gone while the chats' fences remain.

use iris_shared::keys::{self, AccountKeys};
use iris_shared::outbox::{RUN_FIELD, SEQ_FIELD};

use super::Cluster;
use crate::resp::Reply;

/// Deletes every entry of a stream from `ARGV[1]` on (a script, so the stream does not
/// change between the range read and the deletes).
const DELETE_FROM: &str = "for _, entry in ipairs(redis.call('XRANGE', KEYS[1], ARGV[1], '+')) do \
    redis.call('XDEL', KEYS[1], entry[1]) end return 1";

impl Cluster {
    /// The outbox of `account` as a replica promoted by a lossy failover would present it:
    /// it had replicated up to seq `kept` only. The head goes back to `kept`, the later
    /// entries are gone (the stream's last id too), and the meta names the old master as
    /// the history that wrote it, which is another server than the one now running.
    /// Returns the identity the meta recorded before (the server really running).
    pub fn lose_outbox_tail(&self, account: &str, kept: u64) -> String {
        let keys = AccountKeys::new(account);
        let (outbox, meta) = (keys.outbox(), keys.outbox_meta());
        let recorded = self.ok(&["HGET", &meta, RUN_FIELD]);
        let recorded = recorded
            .text()
            .expect("the outbox recorded who wrote it")
            .to_owned();
        let other = format!("repl:{}", "0".repeat(40));
        assert_ne!(recorded, other);
        let from = format!("{}-0", kept + 1);
        self.ok(&["EVAL", DELETE_FROM, "1", &outbox, &from]);
        self.ok(&["XSETID", &outbox, &format!("{kept}-0")]);
        self.ok(&[
            "HSET",
            &meta,
            SEQ_FIELD,
            &kept.to_string(),
            RUN_FIELD,
            &other,
        ]);
        recorded
    }

    /// The shard of `partition` lost its lease and its fencing-token counter (the chats'
    /// fences, on the accounts' shards, keep the tokens issued before).
    pub fn lose_partition_keys(&self, partition: u32) {
        self.ok(&[
            "DEL",
            &keys::lease(partition),
            &keys::lease_fence(partition),
        ]);
    }

    /// The lease of `partition` as `(node, fence)`, if one is held.
    pub fn lease_of(&self, partition: u32) -> Option<(String, u64)> {
        let reply = self.ok(&["GET", &keys::lease(partition)]);
        let (node, fence) = reply.text()?.rsplit_once('|')?;
        Some((node.to_owned(), fence.parse().ok()?))
    }

    fn ok(&self, args: &[&str]) -> Reply {
        match self.redis_command(args) {
            Ok(Reply::Error(err)) => panic!("{args:?}: {err}"),
            Ok(reply) => reply,
            Err(err) => panic!("{args:?}: {err}"),
        }
    }
}
