//! A counter per value of one label (frames by type, turns by outcome). The values seen
//! are bounded: past [`MAX_VALUES`] distinct ones, new values count under `other`, so a
//! hostile or buggy input cannot grow the series without limit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Most distinct label values kept.
pub const MAX_VALUES: usize = 64;

/// Counters keyed by the value of one label.
#[derive(Debug)]
pub struct LabeledCounter {
    label: &'static str,
    counts: RwLock<BTreeMap<String, Arc<AtomicU64>>>,
}

impl LabeledCounter {
    /// No counts yet; series carry the label `label`.
    pub fn new(label: &'static str) -> Self {
        Self {
            label,
            counts: RwLock::default(),
        }
    }

    /// The label's name.
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// Shows `values` at 0 before they first happen: a series born at its first count hides
    /// that count from `rate()` and `increase()`, so alerts on a known value (turns
    /// interrupted) would miss the first ones.
    pub fn declare(&self, values: &[&str]) {
        for value in values {
            self.add(value, 0);
        }
    }

    /// Adds one to the count of `value`.
    pub fn incr(&self, value: &str) {
        self.add(value, 1);
    }

    /// Adds `n` to the count of `value`.
    pub fn add(&self, value: &str, n: u64) {
        if let Some(count) = self.counts.read().ok().and_then(|c| c.get(value).cloned()) {
            count.fetch_add(n, Ordering::Relaxed);
            return;
        }
        let Ok(mut counts) = self.counts.write() else {
            return;
        };
        let key = if counts.len() < MAX_VALUES || counts.contains_key(value) {
            value
        } else {
            "other"
        };
        counts
            .entry(key.to_owned())
            .or_default()
            .fetch_add(n, Ordering::Relaxed);
    }

    /// The count of `value`.
    pub fn get(&self, value: &str) -> u64 {
        self.counts
            .read()
            .ok()
            .and_then(|c| c.get(value).map(|n| n.load(Ordering::Relaxed)))
            .unwrap_or(0)
    }

    /// The sum over every value.
    pub fn total(&self) -> u64 {
        self.snapshot().into_iter().map(|(_, n)| n).sum()
    }

    /// Every value with its count, in label order.
    pub fn snapshot(&self) -> Vec<(String, u64)> {
        self.counts
            .read()
            .map(|c| {
                c.iter()
                    .map(|(value, n)| (value.clone(), n.load(Ordering::Relaxed)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Appends the Prometheus exposition of the series named `name`.
    pub fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for (value, count) in self.snapshot() {
            let value = value.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "{name}{{{}=\"{value}\"}} {count}", self.label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_counts_on_its_own_series() {
        let frames = LabeledCounter::new("type");
        frames.incr("message.send");
        frames.add("sync", 2);
        frames.incr("message.send");
        assert_eq!(frames.get("message.send"), 2);
        assert_eq!(frames.total(), 4);
        let mut text = String::new();
        frames.render(&mut text, "iris_frames_total", "Frames.");
        assert!(text.contains("iris_frames_total{type=\"message.send\"} 2\n"));
        assert!(text.contains("iris_frames_total{type=\"sync\"} 2\n"));
    }

    #[test]
    fn values_past_the_bound_count_as_other() {
        let frames = LabeledCounter::new("type");
        for n in 0..MAX_VALUES + 10 {
            frames.incr(&format!("t{n}"));
        }
        assert_eq!(frames.snapshot().len(), MAX_VALUES + 1);
        assert_eq!(frames.get("other"), 10);
        assert_eq!(frames.total(), (MAX_VALUES + 10) as u64);
    }

    #[test]
    fn label_values_are_escaped() {
        let frames = LabeledCounter::new("type");
        frames.incr("a\"b");
        let mut text = String::new();
        frames.render(&mut text, "x_total", "X.");
        assert!(text.contains("x_total{type=\"a\\\"b\"} 1"));
    }
}
