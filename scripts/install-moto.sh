#!/usr/bin/env bash
# Installs moto's stand-alone S3-compatible server (`moto_server`), which the end-to-end
# test of media on S3 (tests/tests/media.rs) runs as the gateway's object store.
# It goes into its own Python virtual environment (about 320 MB, about a minute from PyPI):
#   ${IRIS_MOTO_VENV:-$HOME/.cache/iris-cluster/moto-venv}
# Safe to run again: it does nothing when `$VENV/bin/moto_server` exists.
# Needs Python 3 with the venv module (python3, or $PYTHON), and PyPI.
set -euo pipefail

MOTO_SPEC='moto[server]==5.2.5'
VENV="${IRIS_MOTO_VENV:-$HOME/.cache/iris-cluster/moto-venv}"
PYTHON="${PYTHON:-python3}"

if [ -x "$VENV/bin/moto_server" ]; then
  exit 0
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "install-moto: need Python 3 (python3 or \$PYTHON)" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "install-moto: creating a virtual environment at $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  if ! "$PYTHON" -m venv "$VENV" >&2; then
    rm -rf "$VENV"
    echo "install-moto: $PYTHON -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  fi
fi

echo "install-moto: installing $MOTO_SPEC into $VENV" >&2
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VENV/bin/python" -m pip install --quiet "$MOTO_SPEC" >&2

if [ ! -x "$VENV/bin/moto_server" ]; then
  echo "install-moto: pip finished but $VENV/bin/moto_server is missing" >&2
  exit 1
fi
echo "install-moto: done ($VENV/bin/moto_server)" >&2
