#!/usr/bin/env bash
# Sets up, builds, generates MobileNetV2 and a demo model repository, starts `osprey serve` on
# it (KServe v2 over HTTP :8000 and gRPC :8001, Prometheus metrics on :8002), sends sample
# requests (curl and Triton's Python clients), shows a few metrics, and stops the server with
# SIGTERM. Ports: OSPREY_DEMO_HTTP_PORT / _GRPC_PORT / _METRICS_PORT.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
HTTP_PORT="${OSPREY_DEMO_HTTP_PORT:-8000}"
GRPC_PORT="${OSPREY_DEMO_GRPC_PORT:-8001}"
METRICS_PORT="${OSPREY_DEMO_METRICS_PORT:-8002}"

bash scripts/setup.sh
bash scripts/build.sh release osprey
.venv/bin/python tools/zoo/make_zoo.py --only mobilenetv2
rm -rf out/demo_repository
.venv/bin/python tools/serve/make_demo_repository.py --out out/demo_repository

echo; echo "== osprey serve --model-repository out/demo_repository"
build/cli/osprey serve --model-repository out/demo_repository --http-port "$HTTP_PORT" \
  --grpc-port "$GRPC_PORT" --metrics-port "$METRICS_PORT" &
server=$!
trap 'kill -TERM $server 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  curl -sf "localhost:$HTTP_PORT/v2/health/ready" >/dev/null && break
  kill -0 $server 2>/dev/null || { echo "osprey serve exited early" >&2; exit 1; }
  sleep 0.2
done
curl -sf "localhost:$HTTP_PORT/v2/health/ready" >/dev/null || { echo "server not ready" >&2; exit 1; }

echo; echo "== curl localhost:$HTTP_PORT/v2/models/add_sub"
curl -s "localhost:$HTTP_PORT/v2/models/add_sub"; echo
echo; echo "== curl -X POST localhost:$HTTP_PORT/v2/models/add_sub/infer (JSON tensors)"
curl -s -X POST "localhost:$HTTP_PORT/v2/models/add_sub/infer" -H 'Content-Type: application/json' -d '{
  "inputs": [
    {"name": "INPUT0", "datatype": "FP32", "shape": [1, 16], "data": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},
    {"name": "INPUT1", "datatype": "FP32", "shape": [1, 16], "data": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}
  ]}'; echo
echo; echo "== tools/serve/sample_request.py (tritonclient HTTP + gRPC)"
.venv/bin/python tools/serve/sample_request.py --http "localhost:$HTTP_PORT" --grpc "localhost:$GRPC_PORT"
echo; echo "== curl localhost:$METRICS_PORT/metrics | grep add_sub"
curl -s "localhost:$METRICS_PORT/metrics" | grep 'model="add_sub"' | grep -v '_bucket' | head -12

echo; echo "== SIGTERM: the server finishes in-flight requests and exits"
kill -TERM $server
wait $server
trap - EXIT
echo "osprey serve exited with status $?"
