#!/usr/bin/env bash
# Configures and builds Osprey.  scripts/build.sh [release|asan|fuzz] [ninja targets...]
#   release -> build/       (default; -O2, what the demo and benchmarks use)
#   asan    -> build-asan/  (AddressSanitizer + UndefinedBehaviorSanitizer)
#   fuzz    -> build-fuzz/  (clang, libFuzzer harnesses)
# Jobs: OSPREY_JOBS (default 2).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-release}"
shift || true
jobs="${OSPREY_JOBS:-2}"
case "$kind" in
  release) dir="$REPO/build"; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  # Sanitizer builds keep line tables only, for symbolized stack traces. The ASan build is -O0
  # (on two cores 10-12 minutes against 18 at -O1; its unit tests take 36 s against 18), but
  # for one kernel file (engine/CMakeLists.txt says why); the fuzz build is -O1, its kernel
  # library -O0.
  asan) dir="$REPO/build-asan"; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSPREY_SANITIZE=ON
                                      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1") ;;
  fuzz) dir="$REPO/build-fuzz"; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSPREY_FUZZ=ON -DOSPREY_TESTS=OFF
                                      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
                                      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only") ;;
  *) echo "usage: scripts/build.sh [release|asan|fuzz] [targets...]" >&2; exit 2 ;;
esac
cmake -S "$REPO" -B "$dir" -G Ninja "${args[@]}" >/dev/null
ninja -C "$dir" -j "$jobs" "$@"
