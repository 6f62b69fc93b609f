#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test:
#   unit tests, ONNX node conformance, CLI tests, server and bench tests (ctest, release build);
#   engine unit tests, conformance and the server's unit tests again under ASan + UBSan;
#   the libFuzzer harnesses (model loader, HTTP infer request, config.pbtxt, image decoders);
#   the model-zoo agreement test against onnxruntime (pytest);
#   `osprey serve` end to end with real clients: tritonclient HTTP/gRPC, perf_analyzer,
#   promtool and a real Prometheus (pytest);
#   the bench peer adapters (onnxruntime, OpenVINO, torch, TFLite, ncnn, MNN) (pytest).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
# libgomp (oneDNN's OpenMP runtime) spins ~15 ms at barriers by default; with ctest -j 2 on 2
# cores that starves the other test's threads. The osprey CLI bounds it itself (cli/main.cc);
# the test binaries get the same bound here.
[[ -n "${OMP_WAIT_POLICY:-}" ]] || export GOMP_SPINCOUNT="${GOMP_SPINCOUNT:-20000}"
step() { printf '\n==== %s (%ds)\n' "$*" "$SECONDS"; }

step "setup"
bash scripts/setup.sh

step "release build"
bash scripts/build.sh release
step "ctest: unit, conformance, cli"
ctest --test-dir build --output-on-failure -j 2

step "ASan + UBSan build"
SERVER_UNIT_TESTS=(osprey_scheduler_tests osprey_metrics_tests osprey_server_core_tests osprey_http_tests)
bash scripts/build.sh asan osprey_unit_tests osprey_conformance "${SERVER_UNIT_TESTS[@]}"
step "unit tests under ASan + UBSan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/tests/osprey_unit_tests --gtest_brief=1
step "server unit tests under ASan + UBSan"
for t in "${SERVER_UNIT_TESTS[@]}"; do
  bin="$(find build-asan/tests/server -type f -name "$t" | head -1)"
  [[ -x "$bin" ]] || { echo "missing ASan build of $t" >&2; exit 1; }
  (cd "$(dirname "$bin")" && "./$t" --gtest_brief=1)
done
step "conformance under ASan + UBSan"
build-asan/tests/conformance/osprey_conformance --quiet \
  --floor tests/conformance/floor.txt --known-failures tests/conformance/known_failures.txt
# opsets 18-22: the cases ctest wrote into the release build tree
build-asan/tests/conformance/osprey_conformance --quiet --data-dir build/tests/conformance/onnx_node_cases_18_22 \
  --floor tests/conformance/floor_opset18_22.txt --known-failures tests/conformance/known_failures_opset18_22.txt

step "fuzz the model loader"
bash scripts/fuzz.sh fuzz_model_loader "${OSPREY_FUZZ_SECONDS:-45}"
for harness in fuzz_http_infer_request fuzz_model_config fuzz_image_decode; do
  step "fuzz $harness"
  bash scripts/fuzz.sh "$harness" "${OSPREY_SERVER_FUZZ_SECONDS:-20}"
done
unset ASAN_OPTIONS UBSAN_OPTIONS

step "model zoo agreement with onnxruntime"
OSPREY_REQUIRE_ZOO=1 OSPREY_BIN="$REPO/build/cli/osprey" .venv/bin/python -m pytest -q tests/zoo
step "osprey serve with real clients (tritonclient, perf_analyzer, Prometheus)"
OSPREY_REQUIRE_ZOO=1 OSPREY_BIN="$REPO/build/cli/osprey" .venv/bin/python -m pytest -q tests/server_e2e
step "bench peer adapters"
.venv/bin/python -m pytest -q tests/bench_peers
step "all tests passed"
