#!/usr/bin/env bash
# Runs every check and test of Iris Cluster: formatting, lints, unit and contract tests,
# and the end-to-end tests that start private Redis servers and the real binaries
# (and a real Hermes Agent, installed into its own virtual environment by install-hermes.sh,
# and moto's S3-compatible server for the media store, by install-moto.sh), after the offline
# checks of the Helm chart (check-chart.sh) and of the deployment files (container images,
# compose, collector, dashboard, the server API's docs/openapi.yaml: check-deploy.sh) and of
# the alerting rules (promtool, from Debian's prometheus package); the
# Socket.IO baseline's own tests run with npm before the Rust tests, and the browser tests'
# playwright-core is installed with npm (the web client tests drive Debian's Chromium with it).
# The supply chain is checked too: vendor/actix-http against its crates.io release
# (check-vendor.sh) and the dependency graph against deny.toml (cargo deny, offline from
# Cargo.lock: licenses, bans with duplicate versions, sources; advisories need the RustSec
# database from GitHub, so they are a separate command: deny.toml's header).
# The flows every device relies on then run a second time on a real Redis Cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
./scripts/install-hermes.sh
./scripts/install-moto.sh
echo "== helm chart" >&2
./scripts/check-chart.sh
echo "== deploy files" >&2
./scripts/check-deploy.sh
echo "== vendor/actix-http is its crates.io release plus iris.patch" >&2
./scripts/check-vendor.sh
echo "== alerting rules (promtool: config, rules, and the rules' unit tests)" >&2
promtool check config deploy/prometheus/prometheus.yml
promtool check rules deploy/prometheus/alerts.yaml
promtool test rules deploy/prometheus/alerts.test.yaml
echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo deny (licenses, bans, sources; offline)" >&2
cargo deny --frozen check licenses bans sources
echo "== cargo build (binaries the end-to-end tests start)" >&2
cargo build --workspace --bins
echo "== Socket.IO baseline (bench/socketio: ratio code and every scenario, small)" >&2
(cd bench/socketio && npm ci --no-audit --no-fund --loglevel=error && npm test)
echo "== browser tests' dependencies (tests/browser: playwright-core)" >&2
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
echo "== cargo test" >&2
cargo test --workspace -- --test-threads "${IRIS_TEST_THREADS:-4}"
echo "== the product's flows again, on a real six-node Redis Cluster (IRIS_TEST_REDIS=cluster)" >&2
IRIS_TEST_REDIS=cluster cargo test -p iris-tests \
  --test pairing --test streamed_turn --test read_receipts --test search --test server_api \
  --test push --test sync_replay --test history_paging --test channels --test slash_commands \
  --test request_order --test live_without_sync --test sync_reset --test media \
  --test token_revoke_by_id \
  --test busy_agent --test worker_failover --test outbox_rebase -- --test-threads "${IRIS_TEST_THREADS:-4}"
