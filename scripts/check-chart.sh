#!/usr/bin/env bash
# Checks the Helm chart helm/iris-cluster offline: helm lint --strict, rendering of every value
# set in helm/iris-cluster/ci/, yamllint of every rendered file, Kubernetes schema validation
# (strict, pinned version) and the chart's own rules; bad value sets in helm/checks/bad-values/
# must be refused. The logic is helm/checks/check_chart.py (structural rules in structure.py).
#
# Helm itself comes as a library (helm-python-sdk: Helm's Go SDK behind a C ABI, no helm binary),
# installed with kubernetes-validate and yamllint into a virtual environment (about 360 MB, under
# a minute from PyPI the first time):
#   ${IRIS_CHART_VENV:-$HOME/.cache/iris-cluster/chart-venv}
# Needs Python 3.10+ with the venv module (python3, or $PYTHON), and PyPI only on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."

CHART_SPECS=(
  'helm-python-sdk==0.2.2'
  'kubernetes-validate==1.37.0'
  'yamllint==1.38.0'
)
VENV="${IRIS_CHART_VENV:-$HOME/.cache/iris-cluster/chart-venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.iris-chart-specs"

if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "${CHART_SPECS[*]}" ]; then
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "check-chart: need Python 3 (python3 or \$PYTHON)" >&2
    exit 1
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    echo "check-chart: creating a virtual environment at $VENV" >&2
    mkdir -p "$(dirname "$VENV")"
    if ! "$PYTHON" -m venv "$VENV" >&2; then
      rm -rf "$VENV"
      echo "check-chart: $PYTHON -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
  echo "check-chart: installing ${CHART_SPECS[*]} into $VENV" >&2
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet "${CHART_SPECS[@]}" >&2
  echo "${CHART_SPECS[*]}" >"$STAMP"
fi

PYTHONDONTWRITEBYTECODE=1 exec "$VENV/bin/python" helm/checks/check_chart.py
