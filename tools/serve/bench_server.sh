#!/usr/bin/env bash
# Server benchmarks (docs/PERFORMANCE.md): per-request overhead on identity_fp32 at concurrency 1
# (HTTP, gRPC); MobileNetV2 at concurrency 16 with and without dynamic batching, against the
# in-process engine at the same threads. Needs build/cli/osprey and models/mobilenetv2.onnx.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
R=out/bench_server/repo; O=out/bench_server; rm -rf $O; mkdir -p $O
.venv/bin/python tools/serve/make_demo_repository.py --out $R > /dev/null
cp -r $R/mobilenetv2 $R/mobilenetv2_nobatch
sed -i 's/name: "mobilenetv2"/name: "mobilenetv2_nobatch"/; /dynamic_batching {/,/^}/d' $R/mobilenetv2_nobatch/config.pbtxt
cat $R/mobilenetv2_nobatch/config.pbtxt
build/cli/osprey serve --model-repository $R --http-port 18100 --grpc-port 18101 --metrics-port 18102 --threads 2 > $O/serve.log 2>&1 &
S=$!
for i in $(seq 1 100); do curl -sf localhost:18100/v2/health/ready >/dev/null && break; sleep 0.3; done
for proto in http grpc; do
  port=18100; [[ $proto == grpc ]] && port=18101
  build/cli/osprey perf -m identity_fp32 -u localhost:$port -i $proto --concurrency-range 1 -p 2000 --out $O/identity_$proto 2>&1 | tail -5
done
for m in mobilenetv2 mobilenetv2_nobatch; do
  build/cli/osprey perf -m $m -u localhost:18101 -i grpc --concurrency-range 16 -p 5000 -r 4 --out $O/$m 2>&1 | tail -5
done
curl -s localhost:18100/v2/models/mobilenetv2/stats | python3 -c 'import json,sys; m=json.load(sys.stdin)["model_stats"][0]; print("mobilenetv2 inference_count", m["inference_count"], "execution_count", m["execution_count"])'
kill -TERM $S; wait $S || true
for b in 1 8; do echo "in-process batch $b:"; build/cli/osprey bench models/mobilenetv2.onnx -t 2 --batch $b --warmup 3 --iterations 30 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print({k:d[k] for k in d if "p50" in k or "through" in k})'; done
