//! Push targets: where each device of an account wants to be woken (an FCM registration
//! token, an ntfy topic, or both), stored in `iris:{a:A}:push` as device id → JSON.
//!
//! Gateways write targets from `hello` and `fcm.register`; the push dispatcher reads them.
//! Updates merge (see [`set_target`]) so a frame carrying one field never erases the other.

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::aio::ConnectionLike;
use redis::{RedisResult, Script};
use serde::{Deserialize, Serialize};

use crate::keys::AccountKeys;

/// Merges a target into the stored one atomically (see the script's header).
static SET_TARGET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("set_target.lua")));

/// Where one device is pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushTarget {
    /// FCM registration token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fcm_token: Option<String>,
    /// ntfy topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy_topic: Option<String>,
}

impl PushTarget {
    /// Whether the target names no channel at all.
    pub fn is_empty(&self) -> bool {
        self.fcm_token.is_none() && self.ntfy_topic.is_none()
    }
}

/// Arguments of one field for the merge script: whether to change it, and its new value.
fn change(field: &Option<String>) -> (&'static str, &str) {
    match field {
        Some(value) => ("1", value.as_str()),
        None => ("0", ""),
    }
}

/// Merges `target` into the stored target of `device_id`: a `None` field leaves the stored
/// one as it is, an empty string clears it. A device left with no field is removed.
pub async fn set_target<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
    target: &PushTarget,
) -> RedisResult<()> {
    let (fcm_changes, fcm) = change(&target.fcm_token);
    let (ntfy_changes, ntfy) = change(&target.ntfy_topic);
    let _kept: i64 = SET_TARGET
        .key(AccountKeys::new(account).push_targets())
        .arg(device_id)
        .arg(fcm_changes)
        .arg(fcm)
        .arg(ntfy_changes)
        .arg(ntfy)
        .invoke_async(conn)
        .await?;
    Ok(())
}

/// Forgets every push target of `device_id` (e.g. when its token is revoked).
pub async fn remove_target<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    device_id: &str,
) -> RedisResult<()> {
    redis::cmd("HDEL")
        .arg(AccountKeys::new(account).push_targets())
        .arg(device_id)
        .query_async(conn)
        .await
}

/// Every device of `account` with a push target. Entries that do not parse, or name no
/// channel, are left out.
pub async fn targets<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> RedisResult<HashMap<String, PushTarget>> {
    let stored: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(AccountKeys::new(account).push_targets())
        .query_async(conn)
        .await?;
    Ok(stored
        .into_iter()
        .filter_map(|(device, json)| {
            let target: PushTarget = serde_json::from_str(&json).ok()?;
            (!target.is_empty()).then_some((device, target))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_are_left_out_of_the_stored_json() {
        let target = PushTarget {
            fcm_token: Some("tok".to_owned()),
            ntfy_topic: None,
        };
        assert_eq!(
            serde_json::to_string(&target).unwrap(),
            r#"{"fcm_token":"tok"}"#
        );
    }

    #[test]
    fn a_none_field_is_left_alone_and_an_empty_one_cleared() {
        assert_eq!(change(&None), ("0", ""));
        assert_eq!(change(&Some(String::new())), ("1", ""));
        assert_eq!(change(&Some("t".to_owned())), ("1", "t"));
    }
}
