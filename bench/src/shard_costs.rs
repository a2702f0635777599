//! Redis cost per shard: each master's `INFO` counters at one moment, what each did over
//! a window (commands, CPU seconds) and how evenly the load fell on them, the **spread**:
//! the busiest shard's figure divided by the mean of all shards (1.0 is perfectly even;
//! with n shards it is at most n, all load on one).

use serde_json::{json, Value};

use crate::report::round3;

/// One master's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardCounters {
    /// `host:port` of the master.
    pub node: String,
    /// Slots it serves (0 when unknown, and for a lone server).
    pub slots: u32,
    pub commands: f64,
    pub cpu_seconds: f64,
}

/// What one master did over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardCost {
    pub node: String,
    pub slots: u32,
    pub commands: f64,
    pub cpu_s: f64,
}

/// Every master's cost over one window (or several added up).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardWindow {
    pub seconds: f64,
    pub shards: Vec<ShardCost>,
}

/// The busiest value divided by the mean (`None` without values or without load).
pub fn spread(values: &[f64]) -> Option<f64> {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let busiest = values.iter().copied().fold(f64::NAN, f64::max);
    (!values.is_empty() && mean > 0.0).then(|| busiest / mean)
}

impl ShardWindow {
    /// The cost of each master present in both snapshots (matched by address), in the
    /// order of `after`.
    pub fn between(seconds: f64, before: &[ShardCounters], after: &[ShardCounters]) -> Self {
        let shards = after
            .iter()
            .filter_map(|now| {
                let then = before.iter().find(|b| b.node == now.node)?;
                Some(ShardCost {
                    node: now.node.clone(),
                    slots: now.slots,
                    commands: now.commands - then.commands,
                    cpu_s: now.cpu_seconds - then.cpu_seconds,
                })
            })
            .collect();
        Self { seconds, shards }
    }

    /// Adds another window's costs, shard by shard in order when both have the same slot
    /// layout (windows of different clusters of one size line up); otherwise the shards
    /// cannot be compared and the result keeps none.
    pub fn add(&mut self, other: &ShardWindow) {
        self.seconds += other.seconds;
        let same_layout = self.shards.len() == other.shards.len()
            && self
                .shards
                .iter()
                .zip(&other.shards)
                .all(|(a, b)| a.slots == b.slots);
        if !same_layout {
            self.shards.clear();
            return;
        }
        for (mine, theirs) in self.shards.iter_mut().zip(&other.shards) {
            mine.commands += theirs.commands;
            mine.cpu_s += theirs.cpu_s;
        }
    }

    /// Commands per second of each shard.
    pub fn commands_per_s(&self) -> Vec<f64> {
        let seconds = self.seconds.max(1e-6);
        self.shards.iter().map(|s| s.commands / seconds).collect()
    }

    /// Spread of commands/s over the shards.
    pub fn commands_spread(&self) -> Option<f64> {
        spread(&self.commands_per_s())
    }

    /// Spread of CPU seconds over the shards.
    pub fn cpu_spread(&self) -> Option<f64> {
        spread(&self.shards.iter().map(|s| s.cpu_s).collect::<Vec<_>>())
    }

    /// The per-shard list for the JSON result's `extra.redis_shards`.
    pub fn to_json(&self) -> Value {
        let per_s = self.commands_per_s();
        let seconds = self.seconds.max(1e-6);
        Value::Array(
            self.shards
                .iter()
                .zip(per_s)
                .map(|(shard, commands_per_s)| {
                    json!({
                        "node": shard.node,
                        "slots": shard.slots,
                        "commands_per_s": round3(commands_per_s),
                        "cpu_s": round3(shard.cpu_s),
                        "cpu_percent_of_a_core": round3(100.0 * shard.cpu_s / seconds),
                    })
                })
                .collect(),
        )
    }

    /// The per-shard table, a sum row and the spreads, as text lines.
    pub fn table(&self) -> Vec<String> {
        let seconds = self.seconds.max(1e-6);
        let per_s = self.commands_per_s();
        let total: f64 = per_s.iter().sum();
        let cpu: f64 = self.shards.iter().map(|s| s.cpu_s).sum();
        let width = self
            .shards
            .iter()
            .map(|s| s.node.len())
            .chain(["redis shard".len()])
            .max()
            .unwrap_or(0);
        let row = |name: &str, slots: String, ops: f64, share: String, cpu_s: f64| {
            format!(
                "    {name:<width$}  {slots:>5}  {ops:>10.0}  {share:>6}  {cpu_s:>6.2}  {:>9.1}",
                100.0 * cpu_s / seconds
            )
        };
        let mut lines = vec![format!(
            "    {:<width$}  {:>5}  {:>10}  {:>6}  {:>6}  {:>9}",
            "redis shard", "slots", "commands/s", "share", "CPU s", "CPU %core"
        )];
        for (shard, ops) in self.shards.iter().zip(&per_s) {
            let share = format!("{:.1}%", 100.0 * ops / total.max(1e-9));
            lines.push(row(
                &shard.node,
                shard.slots.to_string(),
                *ops,
                share,
                shard.cpu_s,
            ));
        }
        let slots: u32 = self.shards.iter().map(|s| s.slots).sum();
        lines.push(row("sum", slots.to_string(), total, String::new(), cpu));
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
        lines.push(format!(
            "    spread (busiest / mean): commands/s {}, CPU {}",
            show(self.commands_spread()),
            show(self.cpu_spread())
        ));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(node: &str, slots: u32, commands: f64, cpu_seconds: f64) -> ShardCounters {
        ShardCounters {
            node: node.to_owned(),
            slots,
            commands,
            cpu_seconds,
        }
    }

    #[test]
    fn the_spread_is_the_busiest_over_the_mean() {
        assert_eq!(spread(&[100.0, 100.0, 100.0]), Some(1.0));
        assert_eq!(spread(&[300.0, 0.0, 0.0]), Some(3.0));
        let uneven = spread(&[150.0, 100.0, 50.0]).unwrap();
        assert!((uneven - 1.5).abs() < 1e-12, "{uneven}");
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[0.0, 0.0]), None);
    }

    #[test]
    fn a_window_matches_shards_by_node_and_reports_rates_and_spreads() {
        let before = [
            counters("a:1", 5461, 1000.0, 1.0),
            counters("b:2", 5462, 500.0, 2.0),
        ];
        let after = [
            counters("a:1", 5461, 3000.0, 3.0),
            counters("b:2", 5462, 1500.0, 3.0),
            counters("new:3", 5461, 99.0, 9.0),
        ];
        let window = ShardWindow::between(10.0, &before, &after);
        assert_eq!(window.shards.len(), 2, "a shard seen once has no window");
        assert_eq!(window.commands_per_s(), [200.0, 100.0]);
        let commands = window.commands_spread().unwrap();
        assert!((commands - 200.0 / 150.0).abs() < 1e-12, "{commands}");
        let cpu = window.cpu_spread().unwrap();
        assert!((cpu - 2.0 / 1.5).abs() < 1e-12, "{cpu}");
        let json = window.to_json();
        assert_eq!(json[0]["node"], "a:1");
        assert_eq!(json[0]["commands_per_s"], 200.0);
        assert_eq!(json[1]["cpu_percent_of_a_core"], 10.0);
        let table = window.table();
        assert!(
            table[1].contains("a:1") && table[1].contains("66.7%"),
            "{table:?}"
        );
        assert!(
            table[3].contains("sum") && table[3].contains("10923"),
            "{table:?}"
        );
        assert!(table[4].ends_with("commands/s 1.33, CPU 1.33"), "{table:?}");
    }

    #[test]
    fn windows_add_up_shard_by_shard_only_with_the_same_layout() {
        let shard = |node: &str, slots, commands, cpu_s| ShardCost {
            node: String::from(node),
            slots,
            commands,
            cpu_s,
        };
        let mut total = ShardWindow {
            seconds: 1.0,
            shards: vec![shard("a:1", 8192, 10.0, 1.0), shard("b:2", 8192, 20.0, 1.0)],
        };
        let other_cluster = ShardWindow {
            seconds: 2.0,
            shards: vec![shard("c:3", 8192, 5.0, 0.5), shard("d:4", 8192, 5.0, 0.5)],
        };
        total.add(&other_cluster);
        assert_eq!(total.seconds, 3.0);
        assert_eq!(total.commands_per_s(), [5.0, 25.0 / 3.0]);
        total.add(&ShardWindow {
            seconds: 1.0,
            shards: vec![shard("e:5", 16384, 1.0, 1.0)],
        });
        assert!(total.shards.is_empty());
    }
}
