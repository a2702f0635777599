#!/usr/bin/env bash
# Installs what building, running and testing Iris Cluster needs beyond a Rust toolchain:
# Redis (server and CLI), Node.js with npm (the Socket.IO baseline in bench/socketio and the
# browser tests in tests/browser), Chromium (the browser those tests drive) and Prometheus
# (promtool checks the alerting rules; the dashboard test runs the server) from Debian
# packages, and cargo-deny (the dependency policy in deny.toml) from crates.io. Safe to run
# again: it skips what is there.
set -euo pipefail

# cargo-deny, at the version deny.toml is written for (a few minutes to build, once).
CARGO_DENY_VERSION=0.20.2
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $CARGO_DENY_VERSION" ]; then
  echo "installing: cargo-deny $CARGO_DENY_VERSION" >&2
  cargo install --locked --quiet cargo-deny --version "$CARGO_DENY_VERSION"
fi

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
[ -x "${IRIS_CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || need+=(prometheus)
# Sentinel (the failover test) runs as `redis-server --sentinel`: no redis-sentinel package needed.
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${need[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install ${need[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || echo "apt-get update failed; trying the cached package lists" >&2
$sudo apt-get install -y -qq "${need[@]}" >/dev/null
# The Debian package may start a system-wide Redis on 6379; the cluster scripts and tests
# start their own servers on their own ports and do not depend on it. Likewise the prometheus
# package's own service (port 9090): the tests start their own Prometheus on a free port.
