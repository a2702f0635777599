#!/usr/bin/env bash
# Installs the real Hermes Agent 0.19.0 that the end-to-end tests in
# tests/tests/hermes_end_to_end.rs run behind the worker's `hermes` backend.
# It goes into its own Python virtual environment (about 240 MB, about 20 s from PyPI):
#   ${IRIS_HERMES_VENV:-$HOME/.cache/iris-cluster/hermes-0.19-venv}
# The `sms` extra is the cheap way to get aiohttp, without which the Hermes API server
# silently does not start. Safe to run again: it does nothing when `$VENV/bin/hermes` exists.
# Needs Python 3.11-3.13 with the venv module (python3, or $PYTHON), and PyPI.
set -euo pipefail

HERMES_SPEC='hermes-agent[sms]==0.19.0'
VENV="${IRIS_HERMES_VENV:-$HOME/.cache/iris-cluster/hermes-0.19-venv}"

if [ -x "$VENV/bin/hermes" ]; then
  exit 0
fi

# Hermes 0.19 needs Python >=3.11,<3.14: take $PYTHON if set, else the first that fits.
fits() { "$1" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))' 2>/dev/null; }
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && fits "$candidate"; then
      PYTHON="$candidate"
      break
    fi
  done
fi
if [ -z "$PYTHON" ] || ! fits "$PYTHON"; then
  echo "install-hermes: need Python 3.11, 3.12 or 3.13 (python3 or \$PYTHON)" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "install-hermes: creating a virtual environment at $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  if ! "$PYTHON" -m venv "$VENV" >&2; then
    rm -rf "$VENV"
    echo "install-hermes: $PYTHON -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
fi

echo "install-hermes: installing $HERMES_SPEC into $VENV (about 240 MB)" >&2
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VENV/bin/python" -m pip install --quiet "$HERMES_SPEC" >&2

if [ ! -x "$VENV/bin/hermes" ]; then
  echo "install-hermes: pip finished but $VENV/bin/hermes is missing" >&2
  exit 1
fi
echo "install-hermes: done ($VENV/bin/hermes)" >&2
