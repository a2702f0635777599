#!/usr/bin/env python3
"""Which keys a Redis Cluster's masters spend their commands on.

Runs `redis-cli MONITOR` on every given node at once for a few seconds and sorts every
command it saw (commands run by scripts included, as INFO counts them) by key class:

  account:<kind>          a per-account key iris:{a:<account>}:<kind>... (all accounts together)
  node:<id>:deliver       one gateway node's delivery stream
  partition-group:<g>     the inbound streams, leases and fences of slot group {p:<g>}
  <key>                   any other key, as it is (one key, one slot)
  (no key) <COMMAND>      commands without a key

and prints, per node, its commands and each class's share of them, then every class's
share of all commands. MONITOR costs the server time of its own, so read the fractions,
not the rates. Before it, each node's `INFO commandstats` is read twice, the same number
of seconds apart, for its commands by name and the time Redis spent in each (a script's
time includes the commands it ran, which are counted again under their own names).

    bench/scripts/redis-key-sample.py --seconds 2 127.0.0.1:11853 127.0.0.1:11854 ...
"""

import argparse
import collections
import re
import shlex
import subprocess
import sys
import threading
import time

KEYLESS = {"PING", "CLIENT", "INFO", "CLUSTER", "PUBLISH", "SCRIPT", "TIME", "ECHO",
           "ROLE", "WAIT", "MULTI", "EXEC", "FUNCTION", "CONFIG", "READONLY", "HELLO",
           "SELECT", "MONITOR", "COMMAND", "SUBSCRIBE", "PSUBSCRIBE"}
LINE = re.compile(r'^\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$')


def first_key(args):
    """The first key a command names, by the layouts the store sends (as link.rs reads them)."""
    name = args[0].upper()
    if name in ("EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"):
        return args[3] if len(args) > 3 and args[2].isdigit() and int(args[2]) > 0 else None
    if name in ("XREAD", "XREADGROUP"):
        upper = [a.upper() for a in args]
        return args[upper.index("STREAMS") + 1] if "STREAMS" in upper else None
    if name in KEYLESS or len(args) < 2:
        return None
    return args[1]


def key_class(args):
    key = first_key(args)
    if key is None:
        return "(no key) " + args[0].upper()
    match = re.match(r'^iris:\{a:[^}]*\}:([a-z_]+)', key)
    if match:
        return "account:" + match.group(1)
    match = re.match(r'^iris:\{p:(\d+)\}:', key)
    if match:
        return "partition-group:" + match.group(1)
    return key


def sample(node, seconds, counts, scripted):
    host, port = node.rsplit(":", 1)
    try:
        out = subprocess.run(["timeout", str(seconds), "redis-cli", "-h", host, "-p", port,
                              "monitor"], capture_output=True, text=True).stdout
    except OSError as err:
        print(f"{node}: {err}", file=sys.stderr)
        return
    for line in out.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        try:
            args = shlex.split(match.group(2))
        except ValueError:
            continue
        if args:
            counts[node][key_class(args)] += 1
            if match.group(1) == "lua":
                scripted[node] += 1


def commandstats(node):
    host, port = node.rsplit(":", 1)
    out = subprocess.run(["redis-cli", "-h", host, "-p", port, "info", "commandstats"],
                         capture_output=True, text=True).stdout
    stats = {}
    for match in re.finditer(r'cmdstat_(\S+):calls=(\d+),usec=(\d+)', out):
        stats[match.group(1)] = (int(match.group(2)), int(match.group(3)))
    return stats


def print_commandstats(nodes, seconds, top):
    before = {node: commandstats(node) for node in nodes}
    time.sleep(seconds)
    after = {node: commandstats(node) for node in nodes}
    for node in nodes:
        rows = []
        for name, (calls, usec) in after[node].items():
            then = before[node].get(name, (0, 0))
            if calls > then[0]:
                rows.append((name, calls - then[0], usec - then[1]))
        calls = sum(r[1] for r in rows)
        usec = sum(r[2] for r in rows)
        print(f"{node}: {calls / seconds:.0f} calls/s, {usec / seconds / 1e4:.1f}% of a core"
              " in commands (INFO commandstats)")
        for name, count, spent in sorted(rows, key=lambda r: -r[2])[:top]:
            print(f"  {name:16} {count / seconds:8.0f}/s {100 * count / max(calls, 1):5.1f}%"
                  f" of calls  {100 * spent / max(usec, 1):5.1f}% of time"
                  f"  {spent / max(count, 1):6.1f} us/call")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("nodes", nargs="+", help="host:port of each master")
    options = parser.parse_args()
    print_commandstats(options.nodes, options.seconds, options.top)
    counts = {node: collections.Counter() for node in options.nodes}
    scripted = collections.Counter()
    threads = [threading.Thread(target=sample, args=(n, options.seconds, counts, scripted))
               for n in options.nodes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = sum(sum(c.values()) for c in counts.values())
    overall = collections.Counter()
    where = collections.defaultdict(set)
    for node in options.nodes:
        node_total = sum(counts[node].values())
        print(f"{node}: {node_total} commands ({100 * node_total / max(total, 1):.1f}% of all;"
              f" {scripted[node]} run by scripts)")
        for name, count in counts[node].most_common(options.top):
            print(f"  {100 * count / max(node_total, 1):5.1f}%  {count:7d}  {name}")
        overall.update(counts[node])
        for name in counts[node]:
            where[name].add(node)
    print(f"all nodes: {total} commands in {options.seconds:g} s")
    for name, count in overall.most_common(options.top * 2):
        nodes = ",".join(sorted(where[name])) if len(where[name]) < len(options.nodes) else "every node"
        print(f"  {100 * count / max(total, 1):5.1f}%  {count:7d}  {name}  [{nodes}]")


if __name__ == "__main__":
    main()
