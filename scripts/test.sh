#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test:
#   unit tests, ONNX node conformance, CLI tests (ctest, release build);
#   unit tests and conformance again under ASan + UBSan;
#   the model-loader fuzzer for OSPREY_FUZZ_SECONDS (default 60);
#   the model-zoo agreement test against onnxruntime (pytest).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
step() { printf '\n==== %s (%ds)\n' "$*" "$SECONDS"; }

step "setup"
bash scripts/setup.sh

step "release build"
bash scripts/build.sh release
step "ctest: unit, conformance, cli"
ctest --test-dir build --output-on-failure -j 2

step "ASan + UBSan build"
bash scripts/build.sh asan osprey_unit_tests osprey_conformance
step "unit tests under ASan + UBSan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/tests/osprey_unit_tests --gtest_brief=1
step "conformance under ASan + UBSan"
build-asan/tests/conformance/osprey_conformance --quiet \
  --floor tests/conformance/floor.txt --known-failures tests/conformance/known_failures.txt

step "fuzz the model loader"
bash scripts/fuzz.sh fuzz_model_loader "${OSPREY_FUZZ_SECONDS:-60}"
unset ASAN_OPTIONS UBSAN_OPTIONS

step "model zoo agreement with onnxruntime"
OSPREY_REQUIRE_ZOO=1 OSPREY_BIN="$REPO/build/cli/osprey" .venv/bin/python -m pytest -q tests/zoo
step "all tests passed"
