//! The masters of a Redis Cluster as `CLUSTER NODES` lists them: address, node id and the
//! slots each serves. The probe reads every master's `INFO` and labels it with these.

/// Number of hash slots of a Redis Cluster.
pub const SLOTS: u32 = 16_384;

/// One master serving slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Master {
    pub id: String,
    /// `host:port` (without the bus port).
    pub addr: String,
    /// Slot ranges served, inclusive, in the order listed.
    pub ranges: Vec<(u16, u16)>,
}

impl Master {
    /// How many slots it serves.
    pub fn slot_count(&self) -> u32 {
        self.ranges
            .iter()
            .map(|(start, end)| u32::from(*end) - u32::from(*start) + 1)
            .sum()
    }

    /// Its lowest slot (masters are listed by it).
    pub fn first_slot(&self) -> Option<u16> {
        self.ranges.iter().map(|(start, _)| *start).min()
    }
}

/// The masters in `CLUSTER NODES` output that serve slots and are not failed, by first
/// slot. `asked` is the `host:port` the output came from: a node that has not learnt its
/// own address yet lists itself as `:port`.
pub fn masters(output: &str, asked: &str) -> Vec<Master> {
    let mut masters: Vec<Master> = output.lines().filter_map(|l| master(l, asked)).collect();
    masters.sort_by_key(|m| m.first_slot());
    masters
}

/// One line: `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch>
/// <link> <slot>...`, where a slot is `n`, `a-b` or `[n-<-id]`/`[n->-id]` (a slot being
/// moved: not counted, its owner lists it as served).
fn master(line: &str, asked: &str) -> Option<Master> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (id, address, flags) = (fields.first()?, fields.get(1)?, fields.get(2)?);
    let flags: Vec<&str> = flags.split(',').collect();
    let failed = flags
        .iter()
        .any(|f| matches!(*f, "fail" | "noaddr" | "handshake"));
    if !flags.contains(&"master") || failed {
        return None;
    }
    let ranges: Vec<(u16, u16)> = fields
        .iter()
        .skip(8)
        .filter_map(|s| slot_range(s))
        .collect();
    if ranges.is_empty() {
        return None;
    }
    let host_port = address.split(['@', ',']).next()?;
    let addr = match host_port.strip_prefix(':') {
        Some(port) => {
            let host = asked.rsplit_once(':').map_or(asked, |(host, _)| host);
            format!("{host}:{port}")
        }
        None => host_port.to_owned(),
    };
    Some(Master {
        id: (*id).to_owned(),
        addr,
        ranges,
    })
}

fn slot_range(text: &str) -> Option<(u16, u16)> {
    if text.starts_with('[') {
        return None;
    }
    let (start, end) = text.split_once('-').unwrap_or((text, text));
    let (start, end): (u16, u16) = (start.parse().ok()?, end.parse().ok()?);
    (start <= end && u32::from(end) < SLOTS).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "\
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:20003@30003 master - 0 1700000000000 3 connected 10923-16383
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:20002@30002,node-b master - 0 1700000000000 2 connected 5461-10922 [5000-<-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f :20001@30001 myself,master - 0 0 1 connected 0-5459 5460
824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:20004@30004 slave 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1700000000000 1 connected
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:20005@30005 master,fail - 1700000000000 1700000000000 4 disconnected 100
";

    #[test]
    fn masters_serving_slots_are_listed_by_first_slot_with_their_slot_counts() {
        let masters = masters(NODES, "127.0.0.1:20001");
        let addrs: Vec<&str> = masters.iter().map(|m| m.addr.as_str()).collect();
        // The replica and the failed master are left out; `myself` without an address
        // takes the host it was asked on.
        assert_eq!(
            addrs,
            ["127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"]
        );
        let counts: Vec<u32> = masters.iter().map(Master::slot_count).collect();
        assert_eq!(counts, [5461, 5462, 5461]);
        assert_eq!(counts.iter().sum::<u32>(), SLOTS);
        assert_eq!(masters[0].ranges, [(0, 5459), (5460, 5460)]);
        assert_eq!(masters[1].id, "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1");
    }

    #[test]
    fn lines_that_are_not_serving_masters_are_skipped() {
        assert!(masters("", "h:1").is_empty());
        assert!(masters("id h:1@2 master - 0 0 1 connected", "h:1").is_empty());
        assert!(masters("id h:1@2 master - 0 0 1 connected 16384", "h:1").is_empty());
        assert!(masters("garbage", "h:1").is_empty());
    }
}
