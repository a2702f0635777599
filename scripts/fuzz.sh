#!/usr/bin/env bash
# Fuzzes the decoders of what devices send (fuzz/fuzz_targets): each target runs for
# SECONDS (default 60), starting from its seed corpus in fuzz/seeds/<target>. New inputs
# libFuzzer finds go to fuzz/corpus/<target> (not committed); a crash leaves its input in
# fuzz/artifacts/<target>/ and makes this script exit non-zero. Not part of scripts/test.sh
# (too slow for every run); the seeds themselves run in `cargo test -p iris-shared`.
#
# cargo-fuzz needs nightly compiler flags; RUSTC_BOOTSTRAP=1 unlocks them on stable.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${1:-60}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

status=0
for target in $(cargo fuzz list); do
  echo "== fuzzing $target for ${seconds}s" >&2
  mkdir -p "corpus/$target"
  if ! cargo fuzz run --release --debug-assertions "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1; then
    echo "== $target crashed: see fuzz/artifacts/$target/" >&2
    status=1
  fi
done
exit "$status"
