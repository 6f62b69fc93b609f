#!/usr/bin/env bash
# Sets up, builds, generates the model zoo, and runs MobileNetV2 through
# `osprey inspect`, `osprey run` and `osprey bench`.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
bash scripts/setup.sh
bash scripts/build.sh release osprey
.venv/bin/python tools/zoo/make_zoo.py --only mobilenetv2
model=models/mobilenetv2.onnx
echo; echo "== osprey inspect $model"; build/cli/osprey inspect "$model"
echo; echo "== osprey run $model"; build/cli/osprey run "$model" --shape input=1x3x224x224 --output-dir out/mobilenetv2
echo; echo "== osprey bench $model"; build/cli/osprey bench "$model" --warmup 3 --iterations 20
