//! Announcing the push kind: gateways read field `push` of `iris:agent` for
//! `hello.ack.server_caps.push`.

use iris_shared::keys;
use iris_shared::protocol::enums::PushKind;
use iris_shared::redis_conn::Pool;

/// The field's value for `kind`, as the protocol spells it.
fn name(kind: PushKind) -> &'static str {
    match kind {
        PushKind::Fcm => "fcm",
        PushKind::Ntfy => "ntfy",
        PushKind::None => "none",
    }
}

/// Sets field `push` of `iris:agent` to `kind` (leaving the other fields alone). Every
/// worker of a cluster should have the same push settings: the last one started wins.
pub async fn announce(redis: &Pool, kind: PushKind) -> anyhow::Result<()> {
    let mut conn = redis.get().await?;
    redis::cmd("HSET")
        .arg(keys::agent_caps())
        .arg("push")
        .arg(name(kind))
        .query_async::<()>(&mut conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_protocol() {
        for kind in [PushKind::Fcm, PushKind::Ntfy, PushKind::None] {
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::Value::from(name(kind))
            );
        }
    }
}
