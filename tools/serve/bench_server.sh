#!/usr/bin/env bash
# Server benchmarks (docs/PERFORMANCE.md): per-request overhead on identity_fp32 at concurrency 1
# (HTTP, gRPC); MobileNetV2 at concurrency 16 over HTTP and gRPC in four serving configurations,
# interleaved with the in-process engine at the same total threads (2). Needs build/cli/osprey
# (or OSPREY=path) and models/mobilenetv2.onnx. ROUNDS (2) and SECS (5) change the run's shape.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OSPREY=${OSPREY:-build/cli/osprey}; ROUNDS=${ROUNDS:-2}; SECS=${SECS:-5}
R=out/bench_server/repo; O=out/bench_server; rm -rf $O; mkdir -p $O
.venv/bin/python tools/serve/make_demo_repository.py --out $R > /dev/null
# variant NAME KEEP_BATCHING INSTANCES: a copy of the demo mobilenetv2 (max_batch_size 8; dynamic
# batching preferred 4, 8 with a 2 ms delay) with its instance count and batching changed.
variant() {
  cp -r $R/mobilenetv2 $R/$1
  sed -i "s/name: \"mobilenetv2\"/name: \"$1\"/; s/count: 1 kind/count: $3 kind/" $R/$1/config.pbtxt
  [[ $2 == yes ]] || sed -i '/dynamic_batching {/,/^}/d' $R/$1/config.pbtxt
}
variant mnv2_batch_i1 yes 1; variant mnv2_nobatch_i1 no 1
variant mnv2_batch_i2 yes 2; variant mnv2_nobatch_i2 no 2
"$OSPREY" serve --model-repository $R --http-port 18100 --grpc-port 18101 --metrics-port 18102 --threads 2 > $O/serve.log 2>&1 &
S=$!
for i in $(seq 1 100); do curl -sf localhost:18100/v2/health/ready >/dev/null && break; sleep 0.3; done
for proto in http grpc; do
  port=18100; [[ $proto == grpc ]] && port=18101
  "$OSPREY" perf -m identity_fp32 -u localhost:$port -i $proto --concurrency-range 1 -p 2000 --out $O/identity_$proto 2>&1 | tail -5
done
throughput() { grep -o '[0-9.]* inferences/s' | cut -d' ' -f1; }
for round in $(seq 1 "$ROUNDS"); do
  for m in mnv2_nobatch_i2 mnv2_batch_i2 mnv2_nobatch_i1 mnv2_batch_i1; do
    for proto in http grpc; do
      port=18100; [[ $proto == grpc ]] && port=18101
      "$OSPREY" perf -m $m -u localhost:$port -i $proto --concurrency-range 16 --duration 1 > /dev/null 2>&1  # warmup
      r=$("$OSPREY" perf -m $m -u localhost:$port -i $proto --concurrency-range 16 --duration "$SECS" 2>&1 | grep -o '[0-9.]* infer/s' | cut -d' ' -f1)
      echo "round $round served $m $proto $r infer/s"
    done
  done
  # In process, while the server idles (its workers sleep): one session with 2 threads, then
  # two 1-thread sessions side by side (two processes), each batch 1.
  echo "round $round in-process 1x2 threads $("$OSPREY" bench models/mobilenetv2.onnx -t 2 -d "$SECS" | throughput) inferences/s"
  "$OSPREY" bench models/mobilenetv2.onnx -t 1 -d "$SECS" > $O/stream_a.txt &
  A=$!
  b=$("$OSPREY" bench models/mobilenetv2.onnx -t 1 -d "$SECS" | throughput); wait $A
  a=$(throughput < $O/stream_a.txt)
  echo "round $round in-process 2x1 thread $(python3 -c "print(round($a + $b, 1))") inferences/s"
done | tee $O/mobilenetv2.txt
for m in mnv2_batch_i1 mnv2_batch_i2; do
  curl -s localhost:18100/v2/models/$m/stats | python3 -c 'import json,sys; m=json.load(sys.stdin)["model_stats"][0]; print(m["name"], "inference_count", m["inference_count"], "execution_count", m["execution_count"])'
done
kill -TERM $S; wait $S || true
