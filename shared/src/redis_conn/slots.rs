//! Redis Cluster slots: which slot a key hashes to, and the slot map a node reports
//! (`CLUSTER SLOTS`: which master serves which ranges).

use redis::aio::ConnectionLike;
use redis::Value;

/// Number of slots of a Redis Cluster.
pub const SLOT_COUNT: u16 = 16384;

/// The slot `key` hashes to: CRC16 (XMODEM) of its hash tag (the first non-empty `{…}`) or
/// of the whole key, modulo [`SLOT_COUNT`], as every Cluster node computes it.
pub fn slot_of(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|&b| b == b'{').and_then(|open| {
        let close = bytes[open + 1..].iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &bytes[open + 1..open + 1 + close])
    });
    crc16_xmodem(tagged.unwrap_or(bytes)) % SLOT_COUNT
}

fn crc16_xmodem(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Slot ranges (inclusive) and the master serving them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot.
    pub start: u16,
    /// Last slot.
    pub end: u16,
    /// `host:port` of the master.
    pub master: String,
}

/// The slot map, as the node `conn` reaches reports it.
pub async fn slot_map<C: ConnectionLike + Send>(
    conn: &mut C,
) -> redis::RedisResult<Vec<SlotRange>> {
    let reply: Value = redis::cmd("CLUSTER").arg("SLOTS").query_async(conn).await?;
    Ok(parse_slot_map(&reply))
}

fn parse_slot_map(reply: &Value) -> Vec<SlotRange> {
    let Value::Array(ranges) = reply else {
        return Vec::new();
    };
    ranges
        .iter()
        .filter_map(|range| {
            let Value::Array(fields) = range else {
                return None;
            };
            let number = |value: &Value| match value {
                Value::Int(n) => u16::try_from(*n).ok(),
                _ => None,
            };
            let Some(Value::Array(master)) = fields.get(2) else {
                return None;
            };
            let host = match master.first()? {
                Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                Value::SimpleString(text) => text.clone(),
                _ => return None,
            };
            let port = number(master.get(1)?)?;
            Some(SlotRange {
                start: number(fields.first()?)?,
                end: number(fields.get(1)?)?,
                master: format!("{host}:{port}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::cluster_routing::Slot;

    #[test]
    fn slots_are_the_ones_cluster_nodes_compute() {
        // Known values: CLUSTER KEYSLOT foo = 12182, {user1000}.following = 3443.
        assert_eq!(slot_of("foo"), 12182);
        assert_eq!(slot_of("{user1000}.following"), 3443);
        // The specification's CRC16 check value, and hash tags from its examples.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(slot_of("{user1000}.following"), slot_of("user1000"));
        assert_eq!(
            slot_of("foo{}{bar}"),
            crc16_xmodem(b"foo{}{bar}") % SLOT_COUNT
        );
        assert_eq!(slot_of("foo{{bar}}zap"), slot_of("{bar"));
        assert_eq!(slot_of("foo{bar}{zap}"), slot_of("bar"));
        for key in [
            "iris:{a:alice}:outbox",
            "iris:{p:3}:in:11",
            "a{b",
            "{}",
            "x{}y{z}",
        ] {
            assert_eq!(Slot::new(slot_of(key)), Some(Slot::for_key(key)), "{key}");
        }
    }

    #[test]
    fn the_slot_map_names_each_ranges_master() {
        let reply = Value::Array(vec![Value::Array(vec![
            Value::Int(0),
            Value::Int(5460),
            Value::Array(vec![
                Value::BulkString(b"127.0.0.1".to_vec()),
                Value::Int(7000),
                Value::BulkString(b"id".to_vec()),
            ]),
        ])]);
        assert_eq!(
            parse_slot_map(&reply),
            vec![SlotRange {
                start: 0,
                end: 5460,
                master: "127.0.0.1:7000".to_owned()
            }]
        );
    }
}
