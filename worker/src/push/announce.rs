//! Announcing the push kind: gateways read it from `iris:agent` for
//! `hello.ack.server_caps.push` (the record is `iris_shared::agent_capabilities`).

use iris_shared::agent_capabilities;
use iris_shared::protocol::enums::PushKind;
use iris_shared::redis_conn::Pool;

/// Announces `kind` (leaving the agent's fields alone). Every worker of a cluster should
/// have the same push settings: the last one started wins.
pub async fn announce(redis: &Pool, kind: PushKind) -> anyhow::Result<()> {
    let mut conn = redis.get().await?;
    agent_capabilities::announce_push(&mut conn, kind).await?;
    Ok(())
}
