//! Device records (`iris:{a:A}:devices`, a hash of device id → JSON): what each device of
//! an account last paired as, when, through which gateway node and with which token.
//!
//! A gateway writes the record at every pairing; the server API lists the records, and a
//! token's revocation finds by them the devices whose push targets go.

use std::collections::{BTreeMap, HashMap};

use redis::aio::ConnectionLike;
use serde::{Deserialize, Serialize};

use crate::agent_capabilities::{self, Announced};
use crate::keys::AccountKeys;

/// One device's record. Every field is optional so that a record missing one (or written
/// by another version) still lists as it is stored. The fields are declared in name order:
/// that is the order the JSON has always been written in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRecord {
    /// When the device last paired, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_ms: Option<u64>,
    /// The name the device paired as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The gateway node it paired through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Id of the token it paired with (the first digits of its hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
}

impl DeviceRecord {
    /// The record of a pairing happening now.
    pub fn paired(name: &str, last_seen_ms: u64, node: &str, token_id: &str) -> Self {
        Self {
            last_seen_ms: Some(last_seen_ms),
            name: Some(name.to_owned()),
            node: Some(node.to_owned()),
            token_id: Some(token_id.to_owned()),
        }
    }

    /// The stored JSON as a record; JSON that does not parse reads as an empty record.
    fn from_stored(json: &str) -> Self {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// The JSON stored for the record.
    fn to_stored(&self) -> String {
        serde_json::to_string(self).expect("a device record serializes")
    }
}

/// Records that `device_id` of `account` paired, and reads what the workers announced
/// (which `hello.ack` carries), in one round trip.
pub async fn record_and_read_announced<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
    record: &DeviceRecord,
) -> redis::RedisResult<Announced> {
    let mut pipe = redis::pipe();
    pipe.cmd("HSET")
        .arg(AccountKeys::new(account).devices())
        .arg(device_id)
        .arg(record.to_stored());
    agent_capabilities::add_read(&mut pipe);
    let ((), announced): ((), HashMap<String, String>) = pipe.query_async(conn).await?;
    Ok(Announced::from_fields(announced))
}

/// Every device record of `account`, by device id.
pub async fn list<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> redis::RedisResult<BTreeMap<String, DeviceRecord>> {
    let stored: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(account).devices())
        .query_async(conn)
        .await?;
    Ok(stored
        .into_iter()
        .map(|(device_id, json)| (device_id, DeviceRecord::from_stored(&json)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_is_stored_as_it_always_was() {
        let record = DeviceRecord::paired("Pixel", 1_700_000_000_000, "gw-1", "0123456789ab");
        let before = serde_json::json!({
            "name": "Pixel", "last_seen_ms": 1_700_000_000_000u64, "node": "gw-1",
            "token_id": "0123456789ab",
        });
        assert_eq!(record.to_stored(), before.to_string());
        assert_eq!(DeviceRecord::from_stored(&record.to_stored()), record);
    }

    #[test]
    fn records_list_with_the_fields_they_have() {
        let partial = DeviceRecord::from_stored(r#"{"name":"old phone"}"#);
        assert_eq!(partial.to_stored(), r#"{"name":"old phone"}"#);
        assert_eq!(
            DeviceRecord::from_stored("not json"),
            DeviceRecord::default()
        );
        assert_eq!(DeviceRecord::default().to_stored(), "{}");
    }
}
