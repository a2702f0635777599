//! What the workers' upstream agent can do and what devices are pushed with (`iris:agent`,
//! a hash): workers announce it at start-up, gateways read it for `hello.ack.server_caps`.
//!
//! Every worker of a cluster should run the same upstream and push settings: the last one
//! started wins.

use std::collections::HashMap;

use redis::aio::ConnectionLike;

use crate::keys;
use crate::protocol::enums::PushKind;

/// Field: the upstream's name.
const KIND_FIELD: &str = "kind";
/// Field: tool calls are reported (`1` or `0`, as every flag).
const TOOLS_FIELD: &str = "tools";
/// Field: reasoning is streamed.
const REASONING_FIELD: &str = "reasoning";
/// Field: approvals are asked for.
const APPROVALS_FIELD: &str = "approvals";
/// Field: running turns can be steered.
const STEER_FIELD: &str = "steer";
/// Field: what devices are pushed with, as the protocol spells [`PushKind`].
const PUSH_FIELD: &str = "push";

/// What the upstream agent can do, as a worker announces it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCapabilities {
    /// The upstream's name.
    pub kind: String,
    /// Tool calls are reported.
    pub tools: bool,
    /// Reasoning is streamed.
    pub reasoning: bool,
    /// Approvals are asked for.
    pub approvals: bool,
    /// Running turns can be steered.
    pub steer: bool,
}

/// Everything the workers announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announced {
    /// The upstream agent's capabilities (all off before any worker announced them).
    pub agent: AgentCapabilities,
    /// What devices are pushed with ([`PushKind::None`] before any worker announced it).
    pub push: PushKind,
}

impl Announced {
    /// The record as its fields read (for a caller that read it in a pipeline of its own,
    /// see [`add_read`]); a flag is on only when it reads `1`.
    pub(crate) fn from_fields(fields: HashMap<String, String>) -> Self {
        let flag = |field: &str| fields.get(field).is_some_and(|value| value == "1");
        let push = match fields.get(PUSH_FIELD).map(String::as_str) {
            Some("fcm") => PushKind::Fcm,
            Some("ntfy") => PushKind::Ntfy,
            _ => PushKind::None,
        };
        Self {
            agent: AgentCapabilities {
                kind: fields.get(KIND_FIELD).cloned().unwrap_or_default(),
                tools: flag(TOOLS_FIELD),
                reasoning: flag(REASONING_FIELD),
                approvals: flag(APPROVALS_FIELD),
                steer: flag(STEER_FIELD),
            },
            push,
        }
    }
}

/// [`PUSH_FIELD`]'s value for `kind`.
fn push_name(kind: PushKind) -> &'static str {
    match kind {
        PushKind::Fcm => "fcm",
        PushKind::Ntfy => "ntfy",
        PushKind::None => "none",
    }
}

/// Announces what the upstream agent can do (leaving the push field alone).
pub async fn announce<C: ConnectionLike + Send>(
    conn: &mut C,
    capabilities: &AgentCapabilities,
) -> redis::RedisResult<()> {
    let flag = |on: bool| if on { "1" } else { "0" };
    redis::cmd("HSET")
        .arg(keys::agent_caps())
        .arg(KIND_FIELD)
        .arg(&capabilities.kind)
        .arg(TOOLS_FIELD)
        .arg(flag(capabilities.tools))
        .arg(REASONING_FIELD)
        .arg(flag(capabilities.reasoning))
        .arg(APPROVALS_FIELD)
        .arg(flag(capabilities.approvals))
        .arg(STEER_FIELD)
        .arg(flag(capabilities.steer))
        .query_async(conn)
        .await
}

/// Announces what devices are pushed with (leaving the agent's fields alone).
pub async fn announce_push<C: ConnectionLike + Send>(
    conn: &mut C,
    kind: PushKind,
) -> redis::RedisResult<()> {
    redis::cmd("HSET")
        .arg(keys::agent_caps())
        .arg(PUSH_FIELD)
        .arg(push_name(kind))
        .query_async(conn)
        .await
}

/// Reads what the workers announced.
pub async fn read<C: ConnectionLike + Send>(conn: &mut C) -> redis::RedisResult<Announced> {
    let fields = redis::cmd("HGETALL")
        .arg(keys::agent_caps())
        .query_async(conn)
        .await?;
    Ok(Announced::from_fields(fields))
}

/// Adds the read of the record to `pipe`, for a caller that reads it in the same round
/// trip as something else; its reply goes through [`Announced::from_fields`].
pub(crate) fn add_read(pipe: &mut redis::Pipeline) {
    pipe.cmd("HGETALL").arg(keys::agent_caps());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn nothing_announced_reads_as_nothing_on() {
        let announced = Announced::from_fields(HashMap::new());
        assert_eq!(announced.agent, AgentCapabilities::default());
        assert_eq!(announced.push, PushKind::None);
    }

    #[test]
    fn flags_are_on_only_when_they_read_one() {
        let announced = Announced::from_fields(fields(&[
            ("kind", "hermes"),
            ("tools", "1"),
            ("reasoning", "0"),
            ("approvals", "yes"),
            ("steer", "1"),
            ("push", "ntfy"),
        ]));
        let expected = AgentCapabilities {
            kind: "hermes".into(),
            tools: true,
            reasoning: false,
            approvals: false,
            steer: true,
        };
        assert_eq!(announced.agent, expected);
        assert_eq!(announced.push, PushKind::Ntfy);
    }

    #[test]
    fn push_kinds_are_written_and_read_as_the_protocol_spells_them() {
        for kind in [PushKind::Fcm, PushKind::Ntfy, PushKind::None] {
            let spelled = serde_json::Value::from(push_name(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), spelled);
            let read = Announced::from_fields(fields(&[("push", push_name(kind))]));
            assert_eq!(read.push, kind);
        }
    }
}
