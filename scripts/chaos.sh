#!/usr/bin/env bash
# Runs the chaos suite for longer than the test command does and prints its counts:
#   ./scripts/chaos.sh [SECONDS] [SEED]
# SECONDS of faults (default 600); SEED replays a run's fault choices (printed by each run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cargo build --workspace --bins
export IRIS_CHAOS_SECS="${1:-600}"
if [ -n "${2:-}" ]; then export IRIS_CHAOS_SEED="$2"; fi
cargo test -p iris-tests --test chaos -- --nocapture 2>&1 \
  | grep -v -E '^\s*$| (INFO|DEBUG|WARN|TRACE) '
