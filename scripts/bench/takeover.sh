#!/usr/bin/env bash
# Measures partition takeover: starts a private Redis and two release workers, kills one
# with SIGKILL, and prints how long until the survivor holds every partition.
# Usage: cargo build --release && scripts/bench/takeover.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
port=${IRIS_BENCH_REDIS_PORT:-6411}
partitions=${IRIS_PARTITIONS:-64}
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no >/dev/null &
redis_pid=$!
trap 'kill $redis_pid ${a_pid:-} ${b_pid:-} 2>/dev/null || true' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
export IRIS_REDIS_URL="redis://127.0.0.1:$port" IRIS_PARTITIONS="$partitions"
IRIS_NODE_ID=bench-a target/release/iris-worker 2>/dev/null & a_pid=$!
IRIS_NODE_ID=bench-b target/release/iris-worker 2>/dev/null & b_pid=$!
holders() { for p in $(seq 0 $((partitions - 1))); do redis-cli -p "$port" get "iris:{p:$((p % 8))}:lease:$p"; done; }
until [ "$(holders | grep -c '|')" -eq "$partitions" ]; do sleep 0.2; done
echo "before: $(holders | grep -c '^bench-a|') partitions on bench-a, $(holders | grep -c '^bench-b|') on bench-b"
start=$(date +%s.%N)
kill -9 "$a_pid"
until [ "$(holders | grep -c '^bench-b|')" -eq "$partitions" ]; do sleep 0.05; done
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$partitions" 'BEGIN { printf "all %d partitions held by the survivor %.2f s after kill -9\n", n, e - s }'
