#!/usr/bin/env bash
# Brings up a local Iris Cluster: Redis (unless IRIS_REDIS_URL points at one), two
# gateways and one worker, then prints a device token and the WebSocket URLs.
# Runs in the foreground; Ctrl-C stops everything it started.
#
# Settings (environment):
#   IRIS_REDIS_URL      use this Redis instead of starting one
#   IRIS_LOCAL_REDIS_PORT  port of the Redis started here (default 6390)
#   IRIS_GATEWAY_PORTS  gateway ports (default "8080 8081"); each gateway serves /metrics and
#                       the server API on its internal listener, 1000 above (9080, 9081)
#   IRIS_WORKER_METRICS_PORT  the worker's /healthz, /readyz, /metrics port (default 9090)
#   IRIS_ACCOUNT        account of the printed token (default "demo")
#   IRIS_AGENT, IRIS_AGENT_URL, IRIS_AGENT_API_KEY, IRIS_AGENT_MODEL  worker's upstream
#   IRIS_STATE_DIR      where Redis data and logs go (default .iris-local)
#   IRIS_ADMIN_KEY      the server API's admin key (default: a random one, printed)
#   OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* settings  passed to every node: with an
#                       endpoint, each exports traces, metrics and logs (docs/observability.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

state_dir=${IRIS_STATE_DIR:-$root/.iris-local}
gateway_ports=${IRIS_GATEWAY_PORTS:-"8080 8081"}
account=${IRIS_ACCOUNT:-demo}
mkdir -p "$state_dir/logs" "$state_dir/redis"

pids=()
cleanup() {
  trap - INT TERM EXIT
  echo
  echo "stopping the cluster..."
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

wait_for() { # url, name
  for _ in $(seq 1 100); do
    if curl -fsS "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not become ready; see $state_dir/logs" >&2
  exit 1
}

./scripts/install-deps.sh
command -v curl >/dev/null 2>&1 || { echo "curl is needed" >&2; exit 1; }

echo "building release binaries..."
cargo build --release --bins --quiet
bin=$root/target/release

if [ -z "${IRIS_REDIS_URL:-}" ]; then
  redis_port=${IRIS_LOCAL_REDIS_PORT:-6390}
  if redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
    echo "using the Redis already answering on port $redis_port"
  else
    redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$state_dir/redis" \
      --appendonly yes --appendfsync everysec --save "" \
      >"$state_dir/logs/redis.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 50); do
      redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
  fi
  export IRIS_REDIS_URL="redis://127.0.0.1:$redis_port"
fi
redis_host_port=${IRIS_REDIS_URL#redis://}
echo "Redis: $IRIS_REDIS_URL"

internal_port() { # a gateway's public port -> its IRIS_INTERNAL_LISTEN port
  echo $(($1 + 1000))
}
admin_key=${IRIS_ADMIN_KEY:-$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')}
index=0
for port in $gateway_ports; do
  index=$((index + 1))
  IRIS_LISTEN="127.0.0.1:$port" IRIS_INTERNAL_LISTEN="127.0.0.1:$(internal_port "$port")" \
    IRIS_NODE_ID="gateway-$index" IRIS_ADMIN_KEY="$admin_key" \
    "$bin/iris-gateway" >"$state_dir/logs/gateway-$index.log" 2>&1 &
  pids+=($!)
done
worker_port=${IRIS_WORKER_METRICS_PORT:-9090}
IRIS_NODE_ID="worker-1" IRIS_METRICS_LISTEN="127.0.0.1:$worker_port" \
  "$bin/iris-worker" >"$state_dir/logs/worker-1.log" 2>&1 &
pids+=($!)

for port in $gateway_ports; do
  wait_for "http://127.0.0.1:$port/readyz" "gateway on port $port"
done
wait_for "http://127.0.0.1:$worker_port/readyz" "worker on port $worker_port"

token=$("$bin/iris-gateway" token create --account "$account" --name "local $(date +%F)" | tail -n 1)

cat <<EOT

Iris Cluster is up (Redis ${redis_host_port}, agent ${IRIS_AGENT:-echo}).
  Web client: open http://127.0.0.1:${gateway_ports%% *}/ and pair with the token below and these
    gateway URLs (the page moves to the next one if its gateway goes away):
      $(for port in $gateway_ports; do printf 'http://127.0.0.1:%s ' "$port"; done)
  WebSocket URLs:$(for port in $gateway_ports; do printf '\n    ws://127.0.0.1:%s/ws' "$port"; done)
  Device token (account "$account"):
    $token
  First frame to send:
    {"v":1,"id":1,"type":"hello","payload":{"token":"$token","device_id":"my-phone"}}
  Then e.g.:
    {"v":1,"id":2,"type":"message.send","chat_id":"android:default","payload":{"text":"hello"}}
  Health: http://127.0.0.1:${gateway_ports%% *}/readyz   Metrics: http://127.0.0.1:$(internal_port "${gateway_ports%% *}")/metrics
  Server API (docs/server-api.md): http://127.0.0.1:$(internal_port "${gateway_ports%% *}")/api/v1  admin key: $admin_key
  Logs: $state_dir/logs/
Press Ctrl-C to stop.
EOT
wait -n "${pids[@]}" || true
echo "a cluster process exited; see $state_dir/logs" >&2
