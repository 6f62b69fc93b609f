#!/usr/bin/env bash
# Runs a libFuzzer harness:  scripts/fuzz.sh HARNESS [seconds]
#   fuzz_model_loader, fuzz_model_run   seeds: every model.onnx of the ONNX node tests (with
#                                       the opset 18-22 cases once ctest has written them)
#   fuzz_http_infer_request             seeds: tests/fuzz/seeds/fuzz_http_infer_request/
#   fuzz_model_config                   seeds: tests/fuzz/seeds/fuzz_model_config/
#   fuzz_image_decode                   seeds: tests/fuzz/seeds/fuzz_image_decode/ (if present)
# New inputs that grow coverage go to build-fuzz/corpus-<harness>/, crashes to build-fuzz/crash-*.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
harness="${1:-fuzz_model_loader}"
seconds="${2:-60}"
bash "$REPO/scripts/build.sh" fuzz "$harness"
case "$harness" in
  fuzz_model_loader | fuzz_model_run)
    seeds="$REPO/build-fuzz/seeds"
    if [[ ! -d "$seeds" ]]; then
      mkdir -p "$seeds"
      for d in /usr/share/libonnx-testdata/data/node/*/; do cp "$d/model.onnx" "$seeds/$(basename "$d").onnx"; done
    fi
    # the opset 18-22 cases, where ctest has written them (tests/conformance/CMakeLists.txt)
    cases18="$REPO/build/tests/conformance/onnx_node_cases_18_22"
    if [[ -d "$cases18" ]] && ! compgen -G "$seeds/op18_*" > /dev/null; then
      for d in "$cases18"/*/; do cp "$d/model.onnx" "$seeds/op18_$(basename "$d").onnx"; done
    fi
    ;;
  *)
    seeds="$REPO/tests/fuzz/seeds/$harness"
    mkdir -p "$REPO/build-fuzz/empty-seeds"
    [[ -d "$seeds" ]] || seeds="$REPO/build-fuzz/empty-seeds"
    ;;
esac
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}suppressions=$REPO/tests/fuzz/ubsan.supp"
corpus="$REPO/build-fuzz/corpus-$harness"
mkdir -p "$corpus"
cd "$REPO/build-fuzz"
"./tests/fuzz/$harness" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$REPO/build-fuzz/" -print_final_stats=1 "$corpus" "$seeds"
