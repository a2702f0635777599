#!/usr/bin/env bash
# Runs each scenario against Iris (iris-bench) and then against the Socket.IO + Redis
# Streams baseline (bench/socketio/bench.js) with the same parameters on the same machine,
# one right after the other, and prints both with their ratios; writes
# bench/results/<date>.json and .md.
#
#   scripts/bench-compare.sh [SCENARIOS...]   (default: idle chat busy fanout reconnect-storm replay)
#
# Environment:
#   CONNECTIONS (10000)     idle connections, on ONE gateway (20000 open files per process here)
#   STORM_CONNECTIONS (2000) reconnect-storm clients, STORM_RATE (200) publishes/s during it
#   HOLD (10) DURATION (10) ACCOUNTS (50) DEVICES (2) CHAT_RATE (1, per account/s)
#   BUSY_ACCOUNTS (200)     busy: chat at CHAT_RATE with each side's slow agent (turns of
#                           1.5 s or more: iris-bench's and bench.js's busy defaults)
#   FANOUT_ACCOUNTS (100) FANOUT_DEVICES (5) FANOUT_RATE (1000, publishes/s)
#   STORM_QUIET (1)         also run the Socket.IO storm with publishing stopped at the drop
#                           (reconnect-storm-quiet; Socket.IO only: see docs/performance.md)
#   EXTRA_ARGS              more flags given to both tools
#   SKIP_BUILD=1            do not run cargo build (use IRIS_BIN_DIR as it is)
#   IRIS_BIN_DIR            where iris-gateway, iris-worker and iris-bench are (target/release)
#   IRIS_BENCH              the iris-bench binary ($IRIS_BIN_DIR/iris-bench)
#   SKIP_IRIS=1             run only the Socket.IO side (the table shows Iris as not run)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sio="$root/bench/socketio"
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(idle chat busy fanout reconnect-storm replay)

CONNECTIONS=${CONNECTIONS:-10000}
STORM_CONNECTIONS=${STORM_CONNECTIONS:-2000}
STORM_RATE=${STORM_RATE:-200}
HOLD=${HOLD:-10}
DURATION=${DURATION:-10}
ACCOUNTS=${ACCOUNTS:-50}
DEVICES=${DEVICES:-2}
CHAT_RATE=${CHAT_RATE:-1}
BUSY_ACCOUNTS=${BUSY_ACCOUNTS:-200}
FANOUT_ACCOUNTS=${FANOUT_ACCOUNTS:-100}
FANOUT_DEVICES=${FANOUT_DEVICES:-5}
FANOUT_RATE=${FANOUT_RATE:-1000}
IRIS_BIN_DIR=${IRIS_BIN_DIR:-$root/target/release}
IRIS_BENCH=${IRIS_BENCH:-$IRIS_BIN_DIR/iris-bench}
read -r -a extra <<<"${EXTRA_ARGS:-}"

echo "== installing the Socket.IO baseline's Node packages (npm ci)" >&2
(cd "$sio" && npm ci --no-audit --no-fund --loglevel=error >&2)

if [ -z "${SKIP_IRIS:-}" ] && [ -z "${SKIP_BUILD:-}" ]; then
  echo "== building the Iris release binaries" >&2
  (cd "$root" && cargo build --release -p iris-gateway -p iris-worker -p iris-bench >&2)
fi
if [ -z "${SKIP_IRIS:-}" ] && [ ! -x "$IRIS_BENCH" ]; then
  echo "iris-bench not found at $IRIS_BENCH (run cargo build --release, or set IRIS_BENCH / SKIP_IRIS=1)" >&2
  exit 1
fi

scenario_args() {
  case "$1" in
    idle) echo "--connections $CONNECTIONS --hold $HOLD" ;;
    chat) echo "--accounts $ACCOUNTS --devices $DEVICES --rate $CHAT_RATE --duration $DURATION" ;;
    busy) echo "--accounts $BUSY_ACCOUNTS --devices $DEVICES --rate $CHAT_RATE --duration $DURATION" ;;
    fanout) echo "--accounts $FANOUT_ACCOUNTS --devices $FANOUT_DEVICES --rate $FANOUT_RATE --duration $DURATION" ;;
    reconnect-storm) echo "--connections $STORM_CONNECTIONS --rate $STORM_RATE" ;;
    replay) echo "" ;;
    *) echo "unknown scenario: $1" >&2; return 1 ;;
  esac
}

stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
iris_files=()
sio_files=()
for scenario in "${scenarios[@]}"; do
  read -r -a args <<<"$(scenario_args "$scenario")"
  if [ -z "${SKIP_IRIS:-}" ]; then
    echo "== $scenario: iris-bench ${args[*]} ${extra[*]}" >&2
    (cd "$root" && "$IRIS_BENCH" "$scenario" --bin-dir "$IRIS_BIN_DIR" "${args[@]}" "${extra[@]}" --json "$work/iris-$scenario.json") ||
      echo "iris-bench $scenario exited with $?" >&2
    # A run that counted errors may still have written its results: they show in the table.
    [ -s "$work/iris-$scenario.json" ] && iris_files+=(--iris "$work/iris-$scenario.json")
  fi
  echo "== $scenario: socketio bench.js ${args[*]} ${extra[*]}" >&2
  (cd "$sio" && node bench.js "$scenario" "${args[@]}" "${extra[@]}" --json "$work/socketio-$scenario.json") ||
    echo "socketio bench.js $scenario exited with $?" >&2
  [ -s "$work/socketio-$scenario.json" ] && sio_files+=(--socketio "$work/socketio-$scenario.json")
  if [ "$scenario" = reconnect-storm ] && [ "${STORM_QUIET:-1}" = 1 ]; then
    echo "== reconnect-storm-quiet: socketio bench.js ${args[*]} --quiet-reconnect ${extra[*]}" >&2
    (cd "$sio" && node bench.js "$scenario" "${args[@]}" --quiet-reconnect "${extra[@]}" --json "$work/socketio-$scenario-quiet.json") ||
      echo "socketio bench.js $scenario --quiet-reconnect exited with $?" >&2
    [ -s "$work/socketio-$scenario-quiet.json" ] && sio_files+=(--socketio "$work/socketio-$scenario-quiet.json")
  fi
done

mkdir -p "$root/bench/results"
note="Scenarios: ${scenarios[*]}. Parameters: CONNECTIONS=$CONNECTIONS STORM_CONNECTIONS=$STORM_CONNECTIONS STORM_RATE=$STORM_RATE HOLD=$HOLD DURATION=$DURATION ACCOUNTS=$ACCOUNTS DEVICES=$DEVICES CHAT_RATE=$CHAT_RATE BUSY_ACCOUNTS=$BUSY_ACCOUNTS FANOUT_ACCOUNTS=$FANOUT_ACCOUNTS FANOUT_DEVICES=$FANOUT_DEVICES FANOUT_RATE=$FANOUT_RATE EXTRA_ARGS=${EXTRA_ARGS:-}."
node "$sio/compare.js" "${iris_files[@]}" "${sio_files[@]}" --out "$root/bench/results/$stamp" --note "$note"
