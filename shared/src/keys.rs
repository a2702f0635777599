//! The one module that names Redis keys. Nothing else in the cluster formats a key.
//!
//! Every per-account key carries the hash tag `{a:<account>}` so that all of an account's
//! state lives in one Redis Cluster slot and the Lua scripts in `scripts/` may touch several
//! of its keys atomically. A partition's inbound stream, lease and fence share the tag of
//! its slot group `{p:<g>}` (`g` = partition mod [`PARTITION_SLOT_GROUPS`]): a worker reads
//! every partition it owns in a group with one `XREADGROUP`, so on a Redis Cluster it needs
//! one read per group, not one per partition. Account names are restricted by
//! [`is_valid_account`] so a name can never break out of its hash tag.
//!
//! Every other key names one thing and sits in a slot of its own; no script or transaction
//! touches two of them (a pipeline that does is split per slot on a Cluster, see
//! `redis_conn::Link`).
//!
//! | key | type | holds |
//! |---|---|---|
//! | `iris:token:<sha256>` | hash | a device token's account, label, creation time (see [`crate::tokens`]) |
//! | `iris:{a:A}:tokens` | set | the token hashes of account A |
//! | `iris:{a:A}:outbox` | stream | A's never-dropped frames, entry id `<seq>-0` |
//! | `iris:{a:A}:outbox:meta` | hash | `seq`: the outbox head; `run`: the Redis history that handed seqs out last; `lost`, `lost_floor`: seq ranges its rebases lost (see [`crate::outbox::lost`]); `exp`, `hx:<chat>`: when the expiries of the outbox and of a chat's history were last renewed |
//! | `iris:{a:A}:presence` | zset | `<node>\n<device>` → hold id (ms): each device of A with a session on a gateway node (see [`crate::presence`]) |
//! | `iris:{a:A}:channels` | hash | chat id → channel JSON |
//! | `iris:{a:A}:devices` | hash | device id → device JSON (name, last seen, node, token id; see [`crate::devices`]) |
//! | `iris:{a:A}:turn:<p>:<entry>` | hash | effect ordinal → outbox seq, for exactly-once replays (`_ttl`: its expiry is set) |
//! | `iris:{a:A}:fence:<chat>` | string | highest fencing token that wrote for the chat |
//! | `iris:{a:A}:history:<chat>` | stream | the chat's finished messages |
//! | `iris:{a:A}:settings:<chat>` | hash | the chat's model, reasoning display, conversation start |
//! | `iris:{a:A}:picker:<id>` | hash | an open picker's chat and kind (any device may answer; see [`crate::pickers`]) |
//! | `iris:{a:A}:search:next` | counter | last n of the search refs `<ts: 13 digits>:<n>` (one per indexed message of A) |
//! | `iris:{a:A}:search:docs` | hash | search ref → indexed message JSON (ids, role, ts, text) |
//! | `iris:{a:A}:search:terms` | hash | search ref → `<words>\n<message id>`, for removal |
//! | `iris:{a:A}:search:lex` | zset | every word indexed for A (score 0), for prefix matching |
//! | `iris:{a:A}:search:word:<w>` | zset | search ref → ts, of A's messages containing word w |
//! | `iris:{a:A}:search:chat:<chat>` | zset | search ref → ts, of the chat's indexed messages |
//! | `iris:{a:A}:search:ids:<chat>` | hash | message id → search ref, for idempotent indexing |
//! | `iris:{a:A}:channel_seq` | counter | last number given to a created channel or thread |
//! | `iris:{a:A}:messages` | hash | message id → `<chat>\|<history entry id>` (history paging, receipts) |
//! | `iris:{a:A}:reads` | hash | chat id → `<history entry id>\|<message id>` of the last read message |
//! | `iris:{a:A}:media:<media_id>` | hash | a stored media item: kind, mime, size, filename, sha256, created_ms |
//! | `iris:{a:A}:media_ref:<ref>` | string | the media id an upload's `media_ref` names (expires after a day) |
//! | `iris:{a:A}:push` | hash | device id → push target JSON (`fcm_token`, `ntfy_topic`) |
//! | `iris:{a:A}:pushed:<device>:<seq>` | string | marker: outbox seq already pushed to the device (expires after a day) |
//! | `iris:{a:A}:push_window:<device>` | string | worker that pushed the device last, expiring with its rate-limit window |
//! | `iris:{p:<g>}:in:<p>` | stream | inbound requests of partition p (group [`WORKER_GROUP`]) |
//! | `iris:{p:<g>}:lease:<p>` | string | `<node>\|<fence>` of p's owner, with a TTL |
//! | `iris:{p:<g>}:fence:<p>` | counter | last fencing token issued for p (`max(last + 1, Redis clock in ms)`, so a lost counter restarts above every earlier token) |
//! | `iris:epoch` | string | the cluster epoch: lost data shows as a missing or changed value |
//! | `iris:{e:<n>}:epoch` | string | on a Redis Cluster, one master's epoch (the first n whose tag hashes into its slots) |
//! | `iris:workers` | zset | worker node → expiry (ms) of its liveness |
//! | `iris:gateways` | zset | gateway node → expiry (ms) of its liveness (see [`crate::presence::gateways`]) |
//! | `iris:leases:released` | pub/sub channel | a worker gave leases up: the others look for free partitions at once |
//! | `iris:agent` | hash | what the workers' upstream agent can do and the push kind (announced in `hello.ack`; see [`crate::agent_capabilities`]) |
//! | `iris:node:<id>:deliver` | stream | frames for the devices gateway node `id` holds |
//! | `iris:push:jobs` | stream | push notifications to send (group `pushers`, see [`crate::push`]) |

use crate::partition::Partition;

/// Number of slot groups the partitions' keys are spread over (see the module doc).
pub const PARTITION_SLOT_GROUPS: u32 = 8;

/// Prefix of every key the cluster writes.
pub const PREFIX: &str = "iris";
/// Consumer group that workers read inbound partitions with.
pub const WORKER_GROUP: &str = "workers";

/// Whether `account` may name an account: 1-128 of `[A-Za-z0-9._@-]`.
pub fn is_valid_account(account: &str) -> bool {
    (1..=128).contains(&account.len())
        && account
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'-'))
}

/// Keys of one account; all share the account's hash tag.
#[derive(Debug, Clone)]
pub struct AccountKeys {
    tag: String,
}

impl AccountKeys {
    /// Keys of `account` (which must satisfy [`is_valid_account`]).
    pub fn new(account: &str) -> Self {
        Self {
            tag: format!("{PREFIX}:{{a:{account}}}"),
        }
    }
    /// The account's token-hash set.
    pub fn tokens(&self) -> String {
        format!("{}:tokens", self.tag)
    }
    /// The account's outbox stream.
    pub fn outbox(&self) -> String {
        format!("{}:outbox", self.tag)
    }
    /// The outbox's head, the Redis history that wrote it, and its lost ranges.
    pub fn outbox_meta(&self) -> String {
        format!("{}:outbox:meta", self.tag)
    }
    /// Which gateway nodes hold the account's devices.
    pub fn presence(&self) -> String {
        format!("{}:presence", self.tag)
    }
    /// The account's live channel (Pub/Sub; not a key): every gateway node holding a device
    /// of the account subscribes to it.
    pub fn live(&self) -> String {
        format!("{}:live", self.tag)
    }
    /// The account's channels.
    pub fn channels(&self) -> String {
        format!("{}:channels", self.tag)
    }
    /// The account's known devices.
    pub fn devices(&self) -> String {
        format!("{}:devices", self.tag)
    }
    /// Effects already written for inbound entry `entry_id` of `partition`.
    pub fn turn_effects(&self, partition: Partition, entry_id: &str) -> String {
        format!("{}:turn:{partition}:{entry_id}", self.tag)
    }
    /// Highest fencing token that wrote for `chat_id`, as written before the fence moved
    /// into the outbox meta ([`Self::chat_fence_field`]); read once per chat, when the
    /// field is not there yet.
    pub fn legacy_chat_fence(&self, chat_id: &str) -> String {
        format!("{}:fence:{chat_id}", self.tag)
    }
    /// Finished messages of `chat_id`.
    pub fn history(&self, chat_id: &str) -> String {
        format!("{}:history:{chat_id}", self.tag)
    }
    /// The outbox meta's field stamping when `chat_id`'s history expiry was last renewed.
    pub fn history_renewed_field(chat_id: &str) -> String {
        format!("hx:{chat_id}")
    }
    /// The outbox meta field holding the highest fencing token that wrote for `chat_id`
    /// (read with the meta's other fields, in the same command).
    pub fn chat_fence_field(chat_id: &str) -> String {
        format!("f:{chat_id}")
    }
    /// Settings of `chat_id` (model, reasoning display, where the conversation starts).
    pub fn chat_settings(&self, chat_id: &str) -> String {
        format!("{}:settings:{chat_id}", self.tag)
    }
    /// An open picker.
    pub fn picker(&self, picker_id: &str) -> String {
        format!("{}:picker:{picker_id}", self.tag)
    }
    /// Counter of the search refs issued (see [`crate::search`]).
    pub fn search_next(&self) -> String {
        format!("{}:search:next", self.tag)
    }
    /// Indexed messages (JSON) by search ref, with each message's words (`t<ref>`) and its
    /// ref by chat and id (`i<chat>\n<message id>`).
    pub fn search_docs(&self) -> String {
        format!("{}:search:docs", self.tag)
    }
    /// Words and message id of each message indexed before they moved into the docs hash,
    /// by search ref (read when removing such a message).
    pub fn search_terms(&self) -> String {
        format!("{}:search:terms", self.tag)
    }
    /// Every indexed word, for prefix matching.
    pub fn search_lexicon(&self) -> String {
        format!("{}:search:lex", self.tag)
    }
    /// Start of every posting-list key: [`Self::search_word`] is this followed by the word
    /// (the search scripts derive posting-list keys from it).
    pub fn search_word_prefix(&self) -> String {
        format!("{}:search:word:", self.tag)
    }
    /// Posting list of `word`: search refs of the messages containing it, scored by ts.
    pub fn search_word(&self, word: &str) -> String {
        format!("{}{word}", self.search_word_prefix())
    }
    /// Search refs of the indexed messages of `chat_id`, scored by ts.
    pub fn search_chat(&self, chat_id: &str) -> String {
        format!("{}:search:chat:{chat_id}", self.tag)
    }
    /// Message id → search ref, for the messages of `chat_id` indexed before the ids moved
    /// into the docs hash (cleared when removing such a message).
    pub fn search_ids(&self, chat_id: &str) -> String {
        format!("{}:search:ids:{chat_id}", self.tag)
    }
    /// Counter numbering created channels and threads.
    pub fn channel_counter(&self) -> String {
        format!("{}:channel_seq", self.tag)
    }
    /// Where each stored message is: its chat and history entry.
    pub fn messages(&self) -> String {
        format!("{}:messages", self.tag)
    }
    /// The last read message of each chat.
    pub fn reads(&self) -> String {
        format!("{}:reads", self.tag)
    }
    /// Metadata of stored media item `media_id` (see [`crate::media::record`]).
    pub fn media(&self, media_id: &str) -> String {
        format!("{}:media:{media_id}", self.tag)
    }
    /// The media id an upload's `media_ref` names.
    pub fn media_ref(&self, media_ref: &str) -> String {
        format!("{}:media_ref:{media_ref}", self.tag)
    }
    /// Push targets of the account's devices (see [`crate::push`]).
    pub fn push_targets(&self) -> String {
        format!("{}:push", self.tag)
    }
    /// Marker that outbox `seq` was pushed to `device_id` (de-duplicates push jobs).
    pub fn pushed(&self, device_id: &str, seq: u64) -> String {
        format!("{}:pushed:{device_id}:{seq}", self.tag)
    }
    /// The rate-limit window of pushes to `device_id`, held by the worker that pushed last.
    pub fn push_window(&self, device_id: &str) -> String {
        format!("{}:push_window:{device_id}", self.tag)
    }
}

/// A device token's record, by the token's SHA-256 (hex).
pub fn token(token_sha256_hex: &str) -> String {
    format!("{PREFIX}:token:{token_sha256_hex}")
}

/// The slot group of `partition`: partitions of one group are read with one command.
pub fn partition_slot_group(partition: Partition) -> u32 {
    partition % PARTITION_SLOT_GROUPS
}

/// The hash-tagged start of every key of `partition`.
fn partition_tag(partition: Partition) -> String {
    format!("{PREFIX}:{{p:{}}}", partition_slot_group(partition))
}

/// Inbound stream of `partition`.
pub fn inbound(partition: Partition) -> String {
    format!("{}:in:{partition}", partition_tag(partition))
}

/// Lease of `partition`.
pub fn lease(partition: Partition) -> String {
    format!("{}:lease:{partition}", partition_tag(partition))
}

/// Fencing-token counter of `partition`.
pub fn lease_fence(partition: Partition) -> String {
    format!("{}:fence:{partition}", partition_tag(partition))
}

/// Live worker nodes.
pub fn workers() -> String {
    format!("{PREFIX}:workers")
}

/// Live gateway nodes, with the expiry of their announcement.
pub fn gateways() -> String {
    format!("{PREFIX}:gateways")
}

/// Pub/sub channel on which a worker announces that it gave partition leases up.
pub fn leases_released() -> String {
    format!("{PREFIX}:leases:released")
}

/// The cluster epoch (see `cluster_epoch`).
pub fn cluster_epoch() -> String {
    format!("{PREFIX}:epoch")
}

/// Epoch key number `n` of a Redis Cluster: each master holds the first one whose tag
/// hashes into its slots (see `cluster_epoch`).
pub fn shard_epoch(n: u32) -> String {
    format!("{PREFIX}:{{e:{n}}}:epoch")
}

/// What the workers' upstream agent can do, and what devices are pushed with.
pub fn agent_caps() -> String {
    format!("{PREFIX}:agent")
}

/// Push notifications waiting to be sent (see [`crate::push`]).
pub fn push_jobs() -> String {
    format!("{PREFIX}:push:jobs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_keys_share_one_hash_tag() {
        let keys = AccountKeys::new("alice");
        for key in [
            keys.outbox(),
            keys.outbox_meta(),
            keys.presence(),
            keys.turn_effects(3, "1-0"),
            keys.legacy_chat_fence("android:default"),
            keys.history("android:default"),
            keys.media("m_0123456789abcdef01234567"),
            keys.media_ref("photo-1"),
        ] {
            assert!(key.starts_with("iris:{a:alice}:"), "{key}");
        }
    }

    #[test]
    fn a_partitions_keys_share_its_slot_group_tag() {
        for partition in [0, 7, 8, 63] {
            let tag = format!("iris:{{p:{}}}:", partition % PARTITION_SLOT_GROUPS);
            for key in [inbound(partition), lease(partition), lease_fence(partition)] {
                assert!(key.starts_with(&tag), "{key}");
            }
        }
        assert_ne!(inbound(1), inbound(9));
    }

    #[test]
    fn account_names_cannot_escape_their_hash_tag() {
        assert!(is_valid_account("alice@example.com"));
        assert!(!is_valid_account("a}b"));
        assert!(!is_valid_account(""));
        assert!(!is_valid_account(&"x".repeat(129)));
    }
}
