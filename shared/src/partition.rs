//! Maps a chat to its inbound partition: `hash(account, chat_id) mod IRIS_PARTITIONS`.
//!
//! Every node must compute the same partition for the same chat, whatever its build or
//! platform, so the hash is a fixed, documented function (64-bit FNV-1a) and never
//! `std`'s randomly seeded hasher.

/// Number of an inbound partition, `0..partitions`.
pub type Partition = u32;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(FNV_OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
    })
}

/// The partition that owns `chat_id` of `account`. A zero byte separates the two parts so
/// that ("ab", "c") and ("a", "bc") hash apart.
pub fn partition_of(account: &str, chat_id: &str, partitions: u32) -> Partition {
    let bytes = account
        .bytes()
        .chain(std::iter::once(0))
        .chain(chat_id.bytes());
    (fnv1a(bytes) % u64::from(partitions.max(1))) as Partition
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_chat_always_lands_in_the_same_partition() {
        let first = partition_of("alice", "android:default", 64);
        assert_eq!(first, partition_of("alice", "android:default", 64));
        assert!(first < 64);
    }

    #[test]
    fn account_and_chat_boundaries_matter() {
        assert_ne!(fnv1a(*b"ab\0c"), fnv1a(*b"a\0bc"));
    }

    #[test]
    fn chats_spread_over_partitions() {
        let used: std::collections::HashSet<_> = (0..1000)
            .map(|i| partition_of(&format!("acct{i}"), "android:default", 16))
            .collect();
        assert_eq!(used.len(), 16);
    }
}
