//! Recognizing a server that refuses writes (a read-only replica, or a master cut off from
//! its replicas) in what a connection returns, so a loop can go and find the new master.

/// Whether an error code says the server must not take writes: a read-only replica, or a
/// master cut off from its replicas (`min-replicas-to-write`), as an old master is after
/// a failover.
fn is_refusal_code(code: Option<&str>) -> bool {
    matches!(code, Some("READONLY" | "NOREPLICAS"))
}

/// A command's result, as a connection returns it, that may carry a server's refusal.
/// Connections hand server errors back as `Ok(Value::ServerError(..))` (only
/// `query_async` turns them into `Err`), so the values must be looked into as well.
pub trait Refusal {
    /// Whether the server refused the command because it takes no writes.
    fn refuses_writes(&self) -> bool;
}

impl Refusal for redis::Value {
    fn refuses_writes(&self) -> bool {
        match self {
            redis::Value::ServerError(err) => is_refusal_code(Some(err.code())),
            // A pipeline's or a transaction's replies.
            redis::Value::Array(values) => values.iter().any(Refusal::refuses_writes),
            _ => false,
        }
    }
}

impl Refusal for Vec<redis::Value> {
    fn refuses_writes(&self) -> bool {
        self.iter().any(Refusal::refuses_writes)
    }
}

impl Refusal for () {
    fn refuses_writes(&self) -> bool {
        false
    }
}

impl<T: Refusal> Refusal for redis::RedisResult<T> {
    fn refuses_writes(&self) -> bool {
        match self {
            Ok(value) => value.refuses_writes(),
            Err(err) => is_refusal_code(err.code()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(wire: &str) -> redis::RedisResult<redis::Value> {
        redis::parse_redis_value(wire.as_bytes())
    }

    #[test]
    fn refusals_are_found_in_replies_as_connections_return_them() {
        assert!(reply("-NOREPLICAS Not enough good replicas to write.\r\n").refuses_writes());
        assert!(
            reply("-READONLY You can't write against a read only replica.\r\n").refuses_writes()
        );
        assert!(reply("*2\r\n+OK\r\n-NOREPLICAS Not enough good replicas\r\n").refuses_writes());
        assert!(!reply("-BUSYGROUP Consumer Group name already exists\r\n").refuses_writes());
        assert!(!reply("+OK\r\n").refuses_writes());
        let refused: redis::RedisResult<()> = reply("-NOREPLICAS Not enough\r\n")
            .and_then(|value| value.extract_error())
            .map(drop);
        assert!(refused.refuses_writes());
    }
}
