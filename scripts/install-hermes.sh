#!/usr/bin/env bash
# Installs the real Hermes Agent 0.19.0 that the end-to-end tests in
# tests/tests/hermes_end_to_end.rs run behind the worker's `hermes` backend.
# It goes into its own Python virtual environment (about 240 MB, about 20 s from PyPI):
#   ${IRIS_HERMES_VENV:-$HOME/.cache/iris-cluster/hermes-0.19-venv}
# The `sms` extra is the cheap way to get aiohttp, without which the Hermes API server
# silently does not start. Safe to run again: it does nothing when `$VENV/bin/hermes` exists.
# Needs python3 (3.11 or newer) with the venv module, and PyPI.
set -euo pipefail

HERMES_SPEC='hermes-agent[sms]==0.19.0'
VENV="${IRIS_HERMES_VENV:-$HOME/.cache/iris-cluster/hermes-0.19-venv}"
PYTHON="${PYTHON:-python3}"

if [ -x "$VENV/bin/hermes" ]; then
  exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || { echo "install-hermes: $PYTHON not found" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  echo "install-hermes: creating a virtual environment at $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
fi

echo "install-hermes: installing $HERMES_SPEC into $VENV (about 240 MB)" >&2
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VENV/bin/python" -m pip install --quiet "$HERMES_SPEC" >&2

if [ ! -x "$VENV/bin/hermes" ]; then
  echo "install-hermes: pip finished but $VENV/bin/hermes is missing" >&2
  exit 1
fi
echo "install-hermes: done ($VENV/bin/hermes)" >&2
