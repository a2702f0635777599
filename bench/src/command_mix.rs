//! Which Redis commands a stretch of load ran: the calls of each command from `INFO
//! commandstats` (`cmdstat_<name>:calls=N,...`; a script's own commands count under their
//! names, and the `EVALSHA` that ran them once more), their differences over a window, and
//! the busiest ones per delivered frame for `extra.redis_commands`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::report::round3;

/// Commands listed in `extra.redis_commands`, busiest first.
pub const LISTED: usize = 16;

/// Calls of each command, by its `INFO commandstats` name (`xadd`, `client|setname`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandMix(BTreeMap<String, f64>);

impl CommandMix {
    /// The calls of every command in `INFO` text.
    pub fn parse(info: &str) -> Self {
        let calls = info
            .lines()
            .filter_map(|line| {
                let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = stats
                    .split(',')
                    .find_map(|field| field.strip_prefix("calls="))?;
                Some((name.to_owned(), calls.trim().parse().ok()?))
            })
            .collect();
        Self(calls)
    }

    /// Adds `other`'s calls to these (several masters, several windows).
    pub fn add(&mut self, other: &CommandMix) {
        for (name, calls) in &other.0 {
            *self.0.entry(name.clone()).or_default() += calls;
        }
    }

    /// What ran between `before` and `self` (commands seen first after `before` count fully).
    pub fn since(&self, before: &CommandMix) -> Self {
        let calls = self
            .0
            .iter()
            .map(|(name, calls)| {
                let then = before.0.get(name).copied().unwrap_or(0.0);
                (name.clone(), calls - then)
            })
            .filter(|(_, calls)| *calls > 0.0)
            .collect();
        Self(calls)
    }

    /// The [`LISTED`] busiest commands as `[name, calls per frame over frames]` pairs,
    /// busiest first.
    pub fn per_frame(&self, frames: u64) -> Value {
        let mut busiest: Vec<(&String, &f64)> = self.0.iter().collect();
        busiest.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let listed = busiest
            .into_iter()
            .take(LISTED)
            .map(|(name, calls)| json!([name, round3(calls / frames.max(1) as f64)]))
            .collect();
        Value::Array(listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_read_per_command_and_differenced() {
        let before = CommandMix::parse(
            "# Commandstats\r\ncmdstat_xadd:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0\r\n\
             cmdstat_get:calls=4,usec=4\r\n",
        );
        let after = CommandMix::parse(
            "cmdstat_xadd:calls=30,usec=150\r\ncmdstat_get:calls=4,usec=4\r\n\
             cmdstat_client|setname:calls=2,usec=1\r\ntotal_commands_processed:99\r\n",
        );
        let window = after.since(&before);
        assert_eq!(window.0.len(), 2, "{window:?}");
        assert_eq!(window.0["xadd"], 20.0);
        assert_eq!(window.0["client|setname"], 2.0);
        assert_eq!(
            window.per_frame(10),
            json!([["xadd", 2.0], ["client|setname", 0.2]])
        );
        let mut sum = window.clone();
        sum.add(&window);
        assert_eq!(sum.0["xadd"], 40.0);
    }
}
