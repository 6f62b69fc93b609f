#!/usr/bin/env bash
# Installs Triton's perf_analyzer into .venv/bin without network access beyond PyPI.
#
# PyPI's "perf-analyzer" name holds only an empty 0.1.0 placeholder here; the binary is
# shipped inside tritonclient's manylinux wheels up to 2.41.0 (data/bin/perf_analyzer).
# It links libb64 (Debian libb64-0d, installed by setup.sh) and libcudart.so.12, which it
# loads even for CPU-only HTTP/gRPC runs; the latter comes from PyPI's
# nvidia-cuda-runtime-cu12 wheel. Both wheels are unpacked into .venv/opt/perf_analyzer
# (the Python tritonclient used by the tests stays the current release).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OSPREY_VENV:-$ROOT/.venv}"
DEST="$VENV/opt/perf_analyzer"
TRITONCLIENT_WHEEL_VERSION=2.41.0
CUDART_VERSION=12.9.79
STAMP="$DEST/.installed-$TRITONCLIENT_WHEEL_VERSION-$CUDART_VERSION"

if [[ -f "$STAMP" && -x "$VENV/bin/perf_analyzer" ]]; then
  echo "[setup] perf_analyzer: already installed"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pip=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)
"${pip[@]}" download -q --no-deps --only-binary=:all: --platform manylinux1_x86_64 \
  -d "$tmp" "tritonclient==$TRITONCLIENT_WHEEL_VERSION"
"${pip[@]}" download -q --no-deps --only-binary=:all: \
  -d "$tmp" "nvidia-cuda-runtime-cu12==$CUDART_VERSION"

rm -rf "$DEST"
mkdir -p "$DEST/lib"
(cd "$tmp" && unzip -q -o tritonclient-*.whl "tritonclient-*.data/data/bin/perf_analyzer")
cp "$tmp"/tritonclient-*.data/data/bin/perf_analyzer "$DEST/perf_analyzer"
chmod +x "$DEST/perf_analyzer"
(cd "$tmp" && unzip -q -o nvidia_cuda_runtime_cu12-*.whl "nvidia/cuda_runtime/lib/libcudart.so.12")
cp "$tmp/nvidia/cuda_runtime/lib/libcudart.so.12" "$DEST/lib/"

cat >"$VENV/bin/perf_analyzer" <<WRAP
#!/usr/bin/env bash
export LD_LIBRARY_PATH="$DEST/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
exec "$DEST/perf_analyzer" "\$@"
WRAP
chmod +x "$VENV/bin/perf_analyzer"
"$VENV/bin/perf_analyzer" --version >/dev/null 2>&1 || {
  echo "[setup] perf_analyzer: installed but does not start:" >&2
  "$VENV/bin/perf_analyzer" --version >&2 || true
  exit 1
}
touch "$STAMP"
echo "[setup] perf_analyzer: installed ($DEST)"
