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
  # Sanitizer builds use -O1 with line tables only: they compile about twice as fast as -O2 -g
  # and still give symbolized stack traces.
  asan) dir="$REPO/build-asan"; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSPREY_SANITIZE=ON
                                      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1") ;;
  fuzz) dir="$REPO/build-fuzz"; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSPREY_FUZZ=ON -DOSPREY_TESTS=OFF
                                      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
                                      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only") ;;
  *) echo "usage: scripts/build.sh [release|asan|fuzz] [targets...]" >&2; exit 2 ;;
esac
cmake -S "$REPO" -B "$dir" -G Ninja "${args[@]}" >/dev/null
ninja -C "$dir" -j "$jobs" "$@"
