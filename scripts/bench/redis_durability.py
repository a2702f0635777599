#!/usr/bin/env python3
"""What Redis's durability settings cost one outbox write, measured in one run.

Starts a private master and its replica (redis-server from PATH, ports picked free, files in
a temporary directory), then times N stream appends of a frame-sized entry (XADD, as the
outbox append does) one after the other on one connection, under each setting:

- asynchronous replication (the default);
- WAIT 1 after each write (the write is on the replica before it counts as done);
- min-replicas-to-write 1 (the master refuses writes without a replica in sync);
- appendonly yes with appendfsync everysec, and with appendfsync always.

Prints p50 and p99 per setting. Usage: redis_durability.py [N] (default 3000). Settings are
measured in turn, twice, so drift on a shared machine shows as disagreement between rounds.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

FRAME = "x" * 300


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Connection:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def call(self, *args):
        parts = [str(a).encode() for a in args]
        self.sock.sendall(
            b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
        )
        return self.reply()

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        if line.startswith(b"-"):
            raise RuntimeError(line.decode())
        if line.startswith(b"$") and line != b"$-1":
            size = int(line[1:])
            while len(self.buf) < size + 2:
                self.buf += self.sock.recv(65536)
            value, self.buf = self.buf[:size], self.buf[size + 2 :]
            return value
        if line.startswith(b"*"):
            return [self.reply() for _ in range(int(line[1:]))]
        return line[1:]


def start(port, directory, *extra):
    os.makedirs(directory, exist_ok=True)
    return subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--repl-diskless-sync-delay", "0", "--dir", directory, *extra],
        stdout=subprocess.DEVNULL,
    )


def wait_for(what, done, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if done():
                return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"{what} did not happen within {timeout} s")


def measure(conn, n, wait):
    times = []
    for _ in range(n):
        start_at = time.perf_counter()
        conn.call("XADD", "bench:outbox", "MAXLEN", "~", "10000", "*", "f", FRAME)
        if wait:
            conn.call("WAIT", "1", "1000")
        times.append((time.perf_counter() - start_at) * 1e6)
    times.sort()
    return times[n // 2], times[int(n * 0.99)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    with tempfile.TemporaryDirectory(prefix="iris-durability-") as tmp:
        master_port, replica_port = free_port(), free_port()
        servers = [
            start(master_port, f"{tmp}/master"),
            start(replica_port, f"{tmp}/replica", "--replicaof", "127.0.0.1", str(master_port)),
        ]
        try:
            wait_for("the replica's sync", lambda: b"master_link_status:up"
                     in Connection(replica_port).call("INFO", "replication"))
            admin = Connection(master_port)
            conn = Connection(master_port)

            def settings(**values):
                for name, value in values.items():
                    admin.call("CONFIG", "SET", name.replace("_", "-"), value)

            cases = [
                ("asynchronous replication (default)", {}, False),
                ("WAIT 1 after each write", {}, True),
                ("min-replicas-to-write 1", {"min_replicas_to_write": "1"}, False),
                ("appendfsync everysec", {"appendonly": "yes", "appendfsync": "everysec"}, False),
                ("appendfsync always", {"appendonly": "yes", "appendfsync": "always"}, False),
            ]
            print(f"{n} appends of a {len(FRAME)}-byte entry per setting, one at a time (µs)")
            print(f"{'setting':40} {'round':>5} {'p50':>7} {'p99':>7}")
            for round_number in (1, 2):
                for label, values, wait in cases:
                    settings(appendonly="no", appendfsync="everysec", min_replicas_to_write="0")
                    settings(**values)
                    if values.get("appendonly") == "yes":
                        wait_for("the AOF rewrite", lambda: b"aof_rewrite_in_progress:0"
                                 in admin.call("INFO", "persistence"))
                    p50, p99 = measure(conn, n, wait)
                    print(f"{label:40} {round_number:>5} {p50:>7.0f} {p99:>7.0f}")
        finally:
            for server in servers:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()
