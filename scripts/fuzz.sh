#!/usr/bin/env bash
# Runs a libFuzzer harness:  scripts/fuzz.sh [fuzz_model_loader|fuzz_model_run] [seconds]
# The seed corpus is every model.onnx of the ONNX node tests; new inputs that grow
# coverage go to build-fuzz/corpus-<harness>/, crashes to build-fuzz/crash-*.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
harness="${1:-fuzz_model_loader}"
seconds="${2:-60}"
bash "$REPO/scripts/build.sh" fuzz "$harness"
seeds="$REPO/build-fuzz/seeds"
if [[ ! -d "$seeds" ]]; then
  mkdir -p "$seeds"
  for d in /usr/share/libonnx-testdata/data/node/*/; do cp "$d/model.onnx" "$seeds/$(basename "$d").onnx"; done
fi
corpus="$REPO/build-fuzz/corpus-$harness"
mkdir -p "$corpus"
cd "$REPO/build-fuzz"
"./tests/fuzz/$harness" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$REPO/build-fuzz/" -print_final_stats=1 "$corpus" "$seeds"
