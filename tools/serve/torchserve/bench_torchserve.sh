#!/usr/bin/env bash
# The same closed-loop load against TorchServe and `osprey serve` for the zoo MobileNetV2
# (docs/PERFORMANCE.md, "Server vs TorchServe (MobileNetV2)").
#
#   bash tools/serve/torchserve/bench_torchserve.sh [OSPREY_BINARY]
#
# OSPREY_BINARY defaults to build/cli/osprey. Needs models/mobilenetv2.onnx, the venv (.venv,
# with Debian's torch through --system-site-packages) and Java 17. Installs
# tools/serve/torchserve/requirements.txt into the venv (--no-deps) when torchserve is missing.
# Environment knobs for the run's shape: DURATION (15 s), WARMUP (3 s), REPS (2), CONCURRENCY
# ("1 16"); OMP_WAIT (PASSIVE): OMP_WAIT_POLICY given to both servers, empty = leave it unset.
# Output: out/bench_torchserve/ (logs, runs.jsonl, summary.md).
#
# Settings (both servers get 2 compute threads and 2 HTTP I/O threads):
#   TorchServe 0.12.0: config.properties below (number_of_netty_threads=2, netty_client_threads=2,
#     default_workers_per_model=1, token auth off, system metrics off) and the archive's
#     model-config.yaml (1 worker, batchSize 1, handler torch_threads 2, interop 1,
#     torch.jit.optimize_for_inference, 5 warmup calls); OMP_NUM_THREADS=2 in its environment.
#   Both: OMP_WAIT_POLICY=PASSIVE (both run GNU OpenMP: torch directly, osprey through oneDNN;
#     its default spin-waiting made 2-thread calls of either take several times longer, torch's
#     up to ~1 s, on the 2 cores shared with the client and other work, in process too).
#   osprey serve: --threads 2 --http-threads 2; model mobilenetv2 with dynamic batching
#     (tools/serve/make_demo_repository.py: max_batch_size 8, preferred 4, 8, 2 ms delay) and
#     mobilenetv2_nobatch, the same without dynamic_batching.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
OSPREY=${1:-build/cli/osprey}
DURATION=${DURATION:-15}; WARMUP=${WARMUP:-3}; REPS=${REPS:-2}; CONCURRENCY=${CONCURRENCY:-"1 16"}
OMP_WAIT=${OMP_WAIT-PASSIVE}
OMP_ENV=(); [[ -n $OMP_WAIT ]] && OMP_ENV=(OMP_WAIT_POLICY=$OMP_WAIT)
PY=.venv/bin/python
HERE=tools/serve/torchserve
O=out/bench_torchserve
[[ -x $OSPREY ]] || { echo "error: $OSPREY is not an executable osprey binary" >&2; exit 1; }
[[ -f models/mobilenetv2.onnx ]] || { echo "error: models/mobilenetv2.onnx missing (tools/zoo/make_zoo.py --only mobilenetv2)" >&2; exit 1; }
command -v java >/dev/null || { echo "error: TorchServe needs Java (17+) on PATH" >&2; exit 1; }
if ! .venv/bin/torchserve --version >/dev/null 2>&1 || [[ ! -x .venv/bin/torch-model-archiver ]]; then
  .venv/bin/pip install --no-deps -r $HERE/requirements.txt
fi
rm -rf $O; mkdir -p $O/logs

free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # URL, what
  for _ in $(seq 1 200); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "error: $2 did not become ready at $1 (logs in $O)" >&2; return 1
}
TS_LAUNCHER=""; OSPREY_PID=""
cleanup() {  # TorchServe's launcher waits on its Java frontend, which stops its Python workers
  if [[ -n $TS_LAUNCHER ]]; then
    for java in $(ps -o pid= --ppid "$TS_LAUNCHER"); do kill -TERM "$java" 2>/dev/null || true; done
    wait "$TS_LAUNCHER" 2>/dev/null || true
  fi
  if [[ -n $OSPREY_PID ]]; then kill -TERM "$OSPREY_PID" 2>/dev/null || true; wait "$OSPREY_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

echo "== model archive and osprey repository"
$PY $HERE/make_mar.py --out $O/model_store > $O/logs/make_mar.log 2>&1 || { cat $O/logs/make_mar.log; exit 1; }
R=$O/osprey_repo
$PY tools/serve/make_demo_repository.py --out $R > /dev/null
cp -r $R/mobilenetv2 $R/mobilenetv2_nobatch
sed -i 's/name: "mobilenetv2"/name: "mobilenetv2_nobatch"/; /dynamic_batching {/,/^}/d' $R/mobilenetv2_nobatch/config.pbtxt
rm -rf $R/mobilenetv2_image $R/identity_fp32 $R/add_sub

TS_INF=$(free_port); TS_MGT=$(free_port); TS_MET=$(free_port)
cat > $O/config.properties <<EOF
inference_address=http://127.0.0.1:$TS_INF
management_address=http://127.0.0.1:$TS_MGT
metrics_address=http://127.0.0.1:$TS_MET
model_store=$PWD/$O/model_store
load_models=mobilenetv2=mobilenetv2.mar
number_of_netty_threads=2
netty_client_threads=2
default_workers_per_model=1
job_queue_size=1000
disable_token_authorization=true
enable_model_api=false
disable_system_metrics=true
install_py_dep_per_model=false
EOF
echo "== starting TorchServe (inference port $TS_INF)"
ABS=$PWD
env "${OMP_ENV[@]}" OMP_NUM_THREADS=2 LOG_LOCATION=$ABS/$O/logs METRICS_LOCATION=$ABS/$O/logs PATH="$ABS/.venv/bin:$PATH" \
  .venv/bin/torchserve --start --foreground --ncs --disable-token-auth \
  --ts-config $O/config.properties > $O/logs/torchserve.log 2>&1 &
TS_LAUNCHER=$!
wait_for "http://127.0.0.1:$TS_MGT/models/mobilenetv2" "TorchServe"
for _ in $(seq 1 200); do
  curl -s "http://127.0.0.1:$TS_MGT/models/mobilenetv2" | grep -q '"status": "READY"' && break; sleep 0.5
done
curl -s "http://127.0.0.1:$TS_MGT/models/mobilenetv2" | grep -q '"status": "READY"' || {
  echo "error: TorchServe's mobilenetv2 worker is not READY (logs in $O/logs)" >&2; exit 1; }

OS_HTTP=$(free_port); OS_GRPC=$(free_port); OS_MET=$(free_port)
echo "== starting osprey serve (HTTP port $OS_HTTP)"
env "${OMP_ENV[@]}" $OSPREY serve --model-repository $R --http-port $OS_HTTP --grpc-port $OS_GRPC --metrics-port $OS_MET \
  --threads 2 --http-threads 2 > $O/logs/osprey_serve.log 2>&1 &
OSPREY_PID=$!
wait_for "http://127.0.0.1:$OS_HTTP/v2/health/ready" "osprey serve"

echo "== output agreement"
grep -h "mobilenetv2 handler:" $O/logs/*.log | tail -1 || true
$PY $HERE/load_client.py compare --torchserve http://127.0.0.1:$TS_INF --kserve http://127.0.0.1:$OS_HTTP | tee $O/agreement.txt
$PY $HERE/load_client.py compare --torchserve http://127.0.0.1:$TS_INF --kserve http://127.0.0.1:$OS_HTTP \
  --kserve-model mobilenetv2_nobatch | tee -a $O/agreement.txt

echo "== load ($REPS reps, warmup ${WARMUP}s, ${DURATION}s measured, concurrency $CONCURRENCY)"
echo "OpenMP wait policy of both servers: ${OMP_WAIT:-(unset)}" | tee $O/settings.txt
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee $O/loadavg.txt
run() {  # label protocol url model concurrency
  $PY $HERE/load_client.py run --label "$1" --protocol "$2" --url "$3" --model "$4" --concurrency "$5" \
    --warmup "$WARMUP" --duration "$DURATION" | tee -a $O/runs.jsonl
}
for rep in $(seq 1 "$REPS"); do
  for c in $CONCURRENCY; do
    run torchserve torchserve http://127.0.0.1:$TS_INF mobilenetv2 "$c"
    run "osprey (dynamic batching)" kserve http://127.0.0.1:$OS_HTTP mobilenetv2 "$c"
    run "osprey (no batching)" kserve http://127.0.0.1:$OS_HTTP mobilenetv2_nobatch "$c"
    echo "load average after rep $rep, concurrency $c: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $O/loadavg.txt
  done
done
echo "== server-side times over all runs (warmup included)"
for m in mobilenetv2 mobilenetv2_nobatch; do
  curl -s "http://127.0.0.1:$OS_HTTP/v2/models/$m/stats" | $PY -c '
import json, sys
m = json.load(sys.stdin)["model_stats"][0]
s = m["inference_stats"]
n = max(1, s["success"]["count"])
queue, infer = s["queue"]["ns"] / n / 1e6, s["compute_infer"]["ns"] / n / 1e6
print("osprey %s: %d inferences in %d executions; per inference queue %.1f ms, compute_infer %.1f ms"
      % (m["name"], m["inference_count"], m["execution_count"], queue, infer))'
done | tee $O/server_times.txt
grep -ho "PredictionTime.ms:[0-9.]*" $O/logs/model_metrics.log 2>/dev/null | cut -d: -f2 | sort -n | \
  awk '{v[NR]=$1} END {if (NR) printf "torchserve handler PredictionTime: %d calls, p50 %.1f ms\n", NR, v[int((NR+1)/2)]}' | tee -a $O/server_times.txt
$PY $HERE/load_client.py summarize $O/runs.jsonl | tee $O/summary.md
