//! The chaos suite's accounting: what each account's outbox (the system of record) says
//! every device is owed, against what each device received — lost, duplicated, out of
//! order, or not its own — and whether every acknowledged message got its answer.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use serde_json::Value;

use crate::chaos::device::DeviceLog;
use crate::cluster::Cluster;
use crate::frames::{payload_str, type_of};
use crate::resp::Reply;

/// One outboxed frame.
#[derive(Debug, Clone)]
pub struct OutboxEntry {
    /// Its seq.
    pub seq: u64,
    /// The only device it is for, if it is for one.
    pub target: Option<String>,
    /// The frame.
    pub frame: Value,
}

/// Reads `account`'s whole outbox, from whichever Redis the cluster runs on.
pub fn read_outbox(cluster: &Cluster, account: &str) -> Vec<OutboxEntry> {
    let key = iris_shared::keys::AccountKeys::new(account).outbox();
    let reply = cluster
        .redis_command(&["XRANGE", &key, "-", "+"])
        .unwrap_or_else(|err| panic!("XRANGE {key}: {err}"));
    let Reply::Array(entries) = reply else {
        panic!("XRANGE {key} answered {reply:?}");
    };
    entries.iter().filter_map(outbox_entry).collect()
}

fn outbox_entry(entry: &Reply) -> Option<OutboxEntry> {
    let Reply::Array(parts) = entry else {
        return None;
    };
    let seq = parts.first()?.text()?.split('-').next()?.parse().ok()?;
    let Reply::Array(fields) = parts.get(1)? else {
        return None;
    };
    let mut map = HashMap::new();
    for pair in fields.chunks(2) {
        if let [name, value] = pair {
            map.insert(name.text()?.to_owned(), value.text()?.to_owned());
        }
    }
    Some(OutboxEntry {
        seq,
        target: map.get("t").filter(|t| !t.is_empty()).cloned(),
        frame: serde_json::from_str(map.get("f")?).ok()?,
    })
}

/// Counts for one device.
#[derive(Debug, Clone, Default)]
pub struct DeviceCounts {
    /// Account and device.
    pub device: String,
    /// Outboxed frames the device was owed.
    pub owed: usize,
    /// Outboxed frames it received (with repeats).
    pub received: usize,
    /// Owed but never received.
    pub lost: usize,
    /// Received more than once.
    pub duplicated: usize,
    /// Received after a higher seq.
    pub reordered: usize,
    /// Received but not owed to it (another device's or another account's frame).
    pub foreign: usize,
    /// Explicit resets it was given (frames before the last one are not judged).
    pub resets: usize,
    /// The first lost frames: seq and type.
    pub lost_examples: Vec<(u64, String)>,
}

/// Counts for one device against its account's outbox.
///
/// After an explicit reset the device is owed what follows the cursor it was given, and
/// what it received before is not held against the outbox (the reset said the outbox lost
/// some of it); repeats and reorderings count everywhere but across a reset.
pub fn count_device(log: &DeviceLog, outbox: &[OutboxEntry]) -> DeviceCounts {
    let (judged_from, from) = match log.resets.last() {
        Some(&(index, cursor)) => (index, cursor),
        None => (0, log.first_cursor.unwrap_or(u64::MAX)),
    };
    let owed: BTreeSet<u64> = outbox
        .iter()
        .filter(|entry| entry.seq > from)
        .filter(|entry| entry.target.as_ref().is_none_or(|t| *t == log.device_id))
        .map(|entry| entry.seq)
        .collect();
    let received: BTreeSet<u64> = log.seqs[judged_from..].iter().copied().collect();
    let mut segment_starts: Vec<usize> = log.resets.iter().map(|&(index, _)| index).collect();
    segment_starts.insert(0, 0);
    segment_starts.push(log.seqs.len());
    let segments: Vec<&[u64]> = segment_starts
        .windows(2)
        .map(|bounds| &log.seqs[bounds[0]..bounds[1].max(bounds[0])])
        .collect();
    let reordered = segments
        .iter()
        .map(|segment| segment.windows(2).filter(|w| w[1] < w[0]).count())
        .sum();
    let duplicated = segments
        .iter()
        .map(|segment| segment.len() - segment.iter().collect::<BTreeSet<_>>().len())
        .sum();
    let lost_examples = outbox
        .iter()
        .filter(|entry| owed.contains(&entry.seq) && !received.contains(&entry.seq))
        .take(5)
        .map(|entry| (entry.seq, type_of(&entry.frame).to_owned()))
        .collect();
    DeviceCounts {
        device: format!("{}/{}", log.account, log.device_id),
        owed: owed.len(),
        received: log.seqs.len(),
        lost: owed.difference(&received).count(),
        duplicated,
        reordered,
        foreign: received.difference(&owed).count(),
        resets: log.resets.len(),
        lost_examples,
    }
}

/// How the talkers' messages fared, from the outbox.
#[derive(Debug, Clone, Default)]
pub struct TurnCounts {
    /// Messages sent by talkers.
    pub sent: usize,
    /// Of those, acknowledged (the user message is in the outbox).
    pub acknowledged: usize,
    /// Acknowledged messages with their full answer (`message.stop` echoing them).
    pub answered: usize,
    /// Turns ended as interrupted (`error` frames of code `internal`).
    pub interrupted: usize,
    /// Acknowledged messages with neither an answer nor an interrupted ending.
    pub unanswered: usize,
    /// Answers written more than once.
    pub answered_twice: usize,
}

impl TurnCounts {
    /// Adds another account's counts to these.
    pub fn add(&mut self, other: &TurnCounts) {
        self.sent += other.sent;
        self.acknowledged += other.acknowledged;
        self.answered += other.answered;
        self.interrupted += other.interrupted;
        self.unanswered += other.unanswered;
        self.answered_twice += other.answered_twice;
    }
}

/// Turn outcomes of `sent` texts against an account's outbox.
pub fn count_turns(sent: &[String], outbox: &[OutboxEntry]) -> TurnCounts {
    let user_texts: Vec<&str> = outbox
        .iter()
        .filter(|e| type_of(&e.frame) == "message" && payload_str(&e.frame, "role") == Some("user"))
        .filter_map(|e| payload_str(&e.frame, "text"))
        .collect();
    let mut answers: HashMap<&str, usize> = HashMap::new();
    for entry in outbox
        .iter()
        .filter(|e| type_of(&e.frame) == "message.stop")
    {
        if let Some(text) = payload_str(&entry.frame, "final_text") {
            *answers.entry(text).or_default() += 1;
        }
    }
    let interrupted = outbox
        .iter()
        .filter(|e| {
            type_of(&e.frame) == "error" && payload_str(&e.frame, "code") == Some("internal")
        })
        .count();
    let mut counts = TurnCounts {
        sent: sent.len(),
        interrupted,
        ..TurnCounts::default()
    };
    for text in sent {
        if !user_texts.contains(&text.as_str()) {
            continue;
        }
        counts.acknowledged += 1;
        match answers.get(format!("echo: {text}").as_str()) {
            Some(1) => counts.answered += 1,
            Some(_) => {
                counts.answered += 1;
                counts.answered_twice += 1;
            }
            None => counts.unanswered += 1,
        }
    }
    counts
}

/// The whole run's report, printed by the suite.
#[derive(Debug, Clone, Default)]
pub struct ChaosReport {
    /// Per device.
    pub devices: Vec<DeviceCounts>,
    /// Per account (talker's messages).
    pub turns: TurnCounts,
    /// Faults injected, by kind.
    pub faults: Vec<(String, usize)>,
    /// Connection breaks the devices saw.
    pub breaks: usize,
    /// Close codes of those breaks (`none`: the connection just dropped).
    pub close_codes: std::collections::BTreeMap<String, usize>,
    /// Sends lost in flight with their gateway (never acknowledged).
    pub unacknowledged: usize,
    /// Sends refused with an `error` (to be sent again).
    pub refused: usize,
    /// Turns a device waited for in vain.
    pub stuck_turns: usize,
    /// Recovery times, break → `sync.done` (ms), sorted.
    pub recovery_ms: Vec<u64>,
}

impl ChaosReport {
    /// Sum of a device counter over every device.
    pub fn total(&self, counter: impl Fn(&DeviceCounts) -> usize) -> usize {
        self.devices.iter().map(counter).sum()
    }

    /// The report as a table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let faults: Vec<String> = self
            .faults
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        let _ = writeln!(out, "faults: {}", faults.join(", "));
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>8} {:>5} {:>10} {:>9} {:>7} {:>6}",
            "device", "owed", "received", "lost", "duplicated", "reordered", "foreign", "resets"
        );
        for d in &self.devices {
            let _ = writeln!(
                out,
                "{:<28} {:>7} {:>8} {:>5} {:>10} {:>9} {:>7} {:>6}",
                d.device,
                d.owed,
                d.received,
                d.lost,
                d.duplicated,
                d.reordered,
                d.foreign,
                d.resets
            );
        }
        for d in self.devices.iter().filter(|d| !d.lost_examples.is_empty()) {
            let _ = writeln!(out, "{} lost, first ones: {:?}", d.device, d.lost_examples);
        }
        let t = &self.turns;
        let _ = writeln!(
            out,
            "messages: sent {}, acknowledged {}, answered {}, interrupted {}, unanswered {}, answered twice {}, refused {}, lost in flight {}",
            t.sent, t.acknowledged, t.answered, t.interrupted, t.unanswered, t.answered_twice, self.refused, self.unacknowledged
        );
        let pick = |q: f64| -> u64 {
            if self.recovery_ms.is_empty() {
                return 0;
            }
            let index = ((self.recovery_ms.len() - 1) as f64 * q).round() as usize;
            self.recovery_ms[index]
        };
        let _ = writeln!(
            out,
            "connection breaks: {} (close codes: {}); recovery (break → sync.done) p50 {} ms, p90 {} ms, max {} ms; stuck turns {}",
            self.breaks,
            self.close_codes
                .iter()
                .map(|(code, n)| format!("{code} ×{n}"))
                .collect::<Vec<_>>()
                .join(", "),
            pick(0.5),
            pick(0.9),
            pick(1.0),
            self.stuck_turns
        );
        out
    }
}
