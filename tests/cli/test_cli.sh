#!/usr/bin/env bash
# Shell test of the `osprey` CLI: happy paths and error paths.
#
# Usage: tests/cli/test_cli.sh [OSPREY_BINARY] [ONNX_NODE_TEST_DIR]
#   defaults: build/cli/osprey and /usr/share/libonnx-testdata/data/node
# Exit status: 0 all passed, 1 a check failed, 77 (ctest SKIP_RETURN_CODE) test data missing.
# Every error case must exit non-zero and print exactly one stderr line "osprey: error: ...".
set -u

OSPREY=${1:-build/cli/osprey}
NODE_DIR=${2:-/usr/share/libonnx-testdata/data/node}
RELU="$NODE_DIR/test_relu/model.onnx"   # x: float32[3,4,5] -> y
ADD="$NODE_DIR/test_add/model.onnx"     # x, y: float32[3,4,5] -> sum

if [[ ! -x "$OSPREY" ]]; then echo "test_cli: no osprey binary at $OSPREY" >&2; exit 1; fi
if [[ ! -f "$RELU" || ! -f "$ADD" ]]; then echo "test_cli: ONNX test data not found under $NODE_DIR; skipping" >&2; exit 77; fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/osprey_cli_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { PASSES=$((PASSES + 1)); }

# ok NAME CMD... : must exit 0 with nothing on stderr; stdout is kept in $TMP/out.
ok() {
  local name=$1; shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [[ $rc -ne 0 ]]; then fail "$name: exit $rc: $(head -c 400 "$TMP/err")"; return 1; fi
  if [[ -s "$TMP/err" ]]; then fail "$name: unexpected stderr: $(head -c 400 "$TMP/err")"; return 1; fi
  pass
}

# err NAME PATTERN CMD... : must exit non-zero with exactly one stderr line
# "osprey: error: ..." that matches the extended regex PATTERN.
err() {
  local name=$1 pattern=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$TMP/err")
  if [[ $rc -eq 0 ]]; then fail "$name: exit 0, expected an error"; return 1; fi
  if [[ $rc -ge 128 ]]; then fail "$name: crashed (exit $rc): $(head -c 400 "$TMP/err")"; return 1; fi
  if [[ $lines -ne 1 ]]; then fail "$name: expected 1 stderr line, got $lines: $(head -c 600 "$TMP/err")"; return 1; fi
  if ! grep -qE '^osprey: error: ' "$TMP/err"; then fail "$name: bad error prefix: $(cat "$TMP/err")"; return 1; fi
  if ! grep -qE -- "$pattern" "$TMP/err"; then fail "$name: error does not match /$pattern/: $(cat "$TMP/err")"; return 1; fi
  pass
}

# contains NAME PATTERN: the last command's stdout matches PATTERN.
contains() {
  if grep -qE -- "$2" "$TMP/out"; then pass; else fail "$1: stdout lacks /$2/: $(head -c 600 "$TMP/out")"; fi
}

# npy FILE DESCR SHAPE DATA_PRINTF: writes a version 1.0 .npy file with the given header
# fields and raw data given as a printf format (e.g. '\x01\x00').
npy() {
  local file=$1 descr=$2 shape=$3 data=$4
  local dict="{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
  local total=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 ))
  local hlen=$(( total - 10 ))
  local pad=$(( hlen - ${#dict} - 1 ))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
    printf '%s%*s\n' "$dict" "$pad" ''
    printf "$data"
  } >"$file"
}

# --- top level -------------------------------------------------------------------------------
ok version "$OSPREY" --version && contains version '^osprey [0-9]+\.[0-9]+\.[0-9]+'
ok help "$OSPREY" --help && contains help 'run' && contains help 'inspect' && contains help 'bench'
for sub in run inspect bench; do
  ok "$sub --help" "$OSPREY" "$sub" --help && contains "$sub --help" 'MODEL|model'
done
err no-subcommand 'subcommand' "$OSPREY"
err unknown-subcommand '.' "$OSPREY" frobnicate
err unknown-option 'bogus' "$OSPREY" run "$RELU" --bogus

# --- inspect ---------------------------------------------------------------------------------
ok inspect "$OSPREY" inspect "$ADD"
contains inspect-ir '^ir_version: [0-9]+'
contains inspect-opsets '^opsets:'
contains inspect-inputs 'x: float32\[3,4,5\]'
contains inspect-op 'Add +1'
contains inspect-nodes '^nodes: 1'
contains inspect-params '^parameters: '
err inspect-missing 'no such file' "$OSPREY" inspect "$TMP/nope.onnx"

# --- ops -------------------------------------------------------------------------------------
ok ops "$OSPREY" ops
contains ops-onnx '^ai\.onnx \(default\)$'
contains ops-conv '^  Conv +1-22 +floats +\[cpu: float32\]'
contains ops-new '^  GroupNormalization +18-22 '
ok ops-domain "$OSPREY" ops --domain com.osprey
contains ops-domain-fused '^  FusedConv '
if grep -q '^  Relu ' "$TMP/out"; then fail "ops --domain com.osprey listed an ONNX op"; else pass; fi
err ops-bad-domain "no ops in domain 'nope'" "$OSPREY" ops --domain nope
# docs/OPERATORS.md is this command's output (regenerate: osprey ops --markdown > docs/OPERATORS.md)
DOCS="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/docs/OPERATORS.md"
ok ops-markdown "$OSPREY" ops --markdown
if cmp -s "$TMP/out" "$DOCS"; then pass; else fail "ops-markdown: docs/OPERATORS.md differs from 'osprey ops --markdown' (regenerate it)"; fi

# --- run -------------------------------------------------------------------------------------
ok run-relu "$OSPREY" run "$RELU" --seed 7 --output-dir "$TMP/o1"
contains run-summary-input 'x +float32\[3,4,5\] +min=-?[0-9.e-]+ max=[0-9.e-]+ mean='
contains run-summary-output 'y +float32\[3,4,5\] +min=0 '
contains run-summary-time '^time: [0-9.]+ ms'
if [[ -f "$TMP/o1/y.npy" ]] && head -c 6 "$TMP/o1/y.npy" | grep -q NUMPY; then pass; else fail "run-relu: no $TMP/o1/y.npy"; fi
ok run-same-seed "$OSPREY" run "$RELU" --seed 7 --output-dir "$TMP/o2"
if cmp -s "$TMP/o1/y.npy" "$TMP/o2/y.npy"; then pass; else fail "same seed gave different outputs"; fi
ok run-other-seed "$OSPREY" run "$RELU" --seed 8 --output-dir "$TMP/o3"
if ! cmp -s "$TMP/o1/y.npy" "$TMP/o3/y.npy"; then pass; else fail "different seeds gave the same outputs"; fi
# relu(relu(x)) == relu(x): feed the first output back in as an .npy input.
ok run-npy-input "$OSPREY" run "$RELU" --input "x=$TMP/o1/y.npy" --output-dir "$TMP/o4"
contains run-npy-source "file $TMP/o1/y.npy"
if cmp -s "$TMP/o1/y.npy" "$TMP/o4/y.npy"; then pass; else fail "relu is not idempotent through .npy files"; fi
ok run-add-mixed "$OSPREY" run "$ADD" -i "x=$TMP/o1/y.npy" --random normal --threads 1
contains run-add-output 'sum +float32\[3,4,5\]'
ok run-shape-fixed "$OSPREY" run "$RELU" --shape x=3x4x5
ok run-level-0 "$OSPREY" run "$RELU" --seed 7 -O 0 --output-dir "$TMP/o5"
if cmp -s "$TMP/o1/y.npy" "$TMP/o5/y.npy"; then pass; else fail "-O 0 changed relu's output"; fi

npy "$TMP/int.npy" '<i8' '(3, 4, 5)' "$(printf '\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00%.0s' $(seq 60))"
npy "$TMP/short.npy" '<f4' '(3, 4, 5)' '\x00\x00\x80\x3f'
npy "$TMP/shape.npy" '<f4' '(2,)' '\x00\x00\x80\x3f\x00\x00\x80\x3f'
npy "$TMP/int1.npy" '<i8' '(2,)' '\x05\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00'
printf 'this is not numpy' >"$TMP/text.npy"
printf 'garbage, not a protobuf \x01\x02\xff\xff' >"$TMP/bad.onnx"

err run-missing-model 'no such file' "$OSPREY" run "$TMP/missing.onnx"
err run-model-dir 'directory' "$OSPREY" run "$TMP"
err run-corrupt-model 'bad.onnx' "$OSPREY" run "$TMP/bad.onnx"
err run-unknown-input "no input 'nosuch'" "$OSPREY" run "$RELU" --input "nosuch=$TMP/o1/y.npy"
err run-missing-npy 'missing.npy' "$OSPREY" run "$RELU" --input "x=$TMP/missing.npy"
err run-corrupt-npy 'not an .npy file' "$OSPREY" run "$RELU" --input "x=$TMP/text.npy"
err run-truncated-npy 'truncated' "$OSPREY" run "$RELU" --input "x=$TMP/short.npy"
err run-wrong-dtype 'int64' "$OSPREY" run "$RELU" --input "x=$TMP/int.npy"
err run-wrong-shape '\[2\]' "$OSPREY" run "$RELU" --input "x=$TMP/shape.npy"
err run-input-syntax 'NAME=VALUE' "$OSPREY" run "$RELU" --input "$TMP/o1/y.npy"
err run-input-twice 'twice' "$OSPREY" run "$RELU" --input "x=$TMP/o1/y.npy" --input "x=$TMP/o1/y.npy"
err run-shape-syntax "bad shape '1xq'" "$OSPREY" run "$RELU" --shape x=1xq
err run-shape-mismatch 'does not match' "$OSPREY" run "$RELU" --shape x=2x4x5
err run-shape-unknown "no input 'z'" "$OSPREY" run "$RELU" --shape z=1
err run-bad-threads 'threads' "$OSPREY" run "$RELU" --threads -1
err run-bad-level 'optimization-level' "$OSPREY" run "$RELU" -O 4
err run-bad-random 'random' "$OSPREY" run "$RELU" --random cauchy
err run-outdir-file 'output-dir' "$OSPREY" run "$RELU" --output-dir "$TMP/text.npy/sub"
err run-no-model 'MODEL' "$OSPREY" run

# --- bench -----------------------------------------------------------------------------------
ok bench-text "$OSPREY" bench "$RELU" --warmup 1 --iterations 5
contains bench-p50 'p50 [0-9.]+'
contains bench-throughput 'throughput: [0-9.]+ inferences/s'
ok bench-sessions "$OSPREY" bench "$RELU" --sessions 3 --warmup 1 --iterations 4 --threads 1
contains bench-sessions-line 'sessions: +3, run concurrently'
contains bench-sessions-runs '4 timed per session \(12 in all\)'
contains bench-sessions-p50s 'p50 per session: [0-9.]+ [0-9.]+ [0-9.]+ ms'
ok bench-sessions-json "$OSPREY" bench "$RELU" --sessions 2 --iterations 3 --threads 1 --json
contains bench-sessions-json-fields '"sessions": 2, "threads": 1, "batch": 1, "iterations": 6'
err bench-sessions-profile 'does not combine' "$OSPREY" bench "$RELU" --sessions 2 --profile
err bench-sessions-range 'sessions' "$OSPREY" bench "$RELU" --sessions 0
ok bench-json "$OSPREY" bench "$RELU" --warmup 2 --iterations 7 --threads 1 --json
if [[ $(wc -l <"$TMP/out") -eq 1 ]]; then pass; else fail "bench --json printed more than one line"; fi
if command -v python3 >/dev/null; then
  if python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "mean_ms", "stdev_ms", "min_ms", "max_ms", "throughput_per_s",
        "iterations", "warmup", "threads", "batch", "load_ms", "peak_rss_mb", "model"]
missing = [k for k in keys if k not in d]
assert not missing, missing
assert d["iterations"] == 7 and d["warmup"] == 2 and d["batch"] == 1, d
assert d["min_ms"] <= d["p50_ms"] <= d["p90_ms"] <= d["p95_ms"] <= d["p99_ms"] <= d["max_ms"], d
assert d["throughput_per_s"] > 0 and d["peak_rss_mb"] > 0, d
PY
  then pass; else fail "bench --json: bad JSON: $(head -c 600 "$TMP/out")"; fi
fi
ok bench-duration "$OSPREY" bench "$RELU" --warmup 0 --duration-s 0.2 --json
err bench-zero-iterations 'iterations' "$OSPREY" bench "$RELU" --iterations 0
err bench-batch-fixed 'symbolic first dimension' "$OSPREY" bench "$RELU" --batch 4
err bench-missing-model 'no such file' "$OSPREY" bench "$TMP/missing.onnx"
err bench-bad-shape 'bad shape' "$OSPREY" bench "$RELU" --shape x=3x4x

# --profile: per-op tables; --peak: FMA peak alone and against a model's counted FLOPs.
CONV="$NODE_DIR/test_conv_with_strides_no_padding/model.onnx"  # x [1,1,7,5], W [1,1,3,3], stride 2
ok bench-profile "$OSPREY" bench "$RELU" --warmup 1 --iterations 4 --profile
contains bench-profile-heading 'op type +ms/run +share +count'
contains bench-profile-relu '^Relu +[0-9.]+ +100\.0% +1$'
contains bench-profile-top 'top 1 nodes by time'
contains bench-profile-top-heading 'ms/run +share +kernel'
err bench-profile-top-alone 'goes with --profile' "$OSPREY" bench "$RELU" --profile-top 3
err bench-batch-split-bad 'batch-split' "$OSPREY" bench "$RELU" --batch-split sometimes
err bench-batch-split-compare 'single-model option' "$OSPREY" bench "$RELU" --frameworks osprey --batch-split off
ok bench-peak "$OSPREY" bench --peak --threads 1
contains bench-peak-line '^peak: +[0-9.]+ GFLOP/s fp32 on 1 thread'
contains bench-peak-isa '^isa: +(avx512f|avx2\+fma)'
ok bench-peak-json "$OSPREY" bench --peak --json
if [[ $(wc -l <"$TMP/out") -eq 1 ]]; then pass; else fail "bench --peak --json printed more than one line"; fi
contains bench-peak-json-gflops '"gflops": [0-9.e+]+'
if [[ -f "$CONV" ]]; then
  ok bench-model-peak "$OSPREY" bench "$CONV" --warmup 1 --iterations 3 --threads 1 --peak --profile --json
  if command -v python3 >/dev/null; then
    if python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["flops_per_run"] == 2 * 6 * 9, d  # Y [1,1,3,2], 3x3 kernel over 1 channel
assert d["peak"]["gflops"] > 0 and d["peak"]["threads"] == 1, d
assert 0 < d["peak_fraction"] and d["achieved_gflops"] > 0, d
ops = [o["op_type"] for o in d["profile"]["by_op_type"]]
assert any(o.endswith("Conv") for o in ops), ops
assert d["profile"]["runs"] == 3, d["profile"]
convs = [n for n in d["profile"]["top_nodes"] if n["op_type"].endswith("Conv")]
assert convs and all(n["kernel"] for n in convs), convs  # the form the convolution ran in
PY
    then pass; else fail "bench --peak --profile --json: $(head -c 600 "$TMP/out")"; fi
  fi
  ok bench-model-peak-text "$OSPREY" bench "$CONV" --warmup 1 --iterations 3 --threads 1 --peak
  contains bench-model-peak-achieved '^achieved: +[0-9.]+ GFLOP/s at p50 = [0-9.]+% of peak'
fi
err bench-no-model 'MODEL is required' "$OSPREY" bench
err bench-peak-compare 'single-model options' "$OSPREY" bench "$RELU" --peak --threads 1,2

# --- symbolic dims, int/bool inputs, unsafe output names (model built with protoc) ------------
PROTO=/usr/include/onnx/onnx.proto
if command -v protoc >/dev/null && [[ -f "$PROTO" ]]; then
  DYN="$TMP/dyn.onnx"
  protoc --encode=onnx.ModelProto -I"$(dirname "$PROTO")" "$PROTO" >"$DYN" <<'TXT'
ir_version: 8
producer_name: "osprey-cli-test"
opset_import { domain: "" version: 17 }
graph {
  name: "dyn"
  node { op_type: "Relu" input: "x" output: "y" }
  node { op_type: "Identity" input: "k" output: "out/with:odd name" }
  node { op_type: "Not" input: "mask" output: "m" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim { dim_value: 3 } } } } }
  input { name: "k" type { tensor_type { elem_type: 7 shape { dim { } } } } }
  input { name: "mask" type { tensor_type { elem_type: 9 shape { dim { dim_value: 2 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim { dim_value: 3 } } } } }
  output { name: "out/with:odd name" type { tensor_type { elem_type: 7 shape { dim { } } } } }
  output { name: "m" type { tensor_type { elem_type: 9 shape { dim { dim_value: 2 } } } } }
}
TXT
  ok dyn-inspect "$OSPREY" inspect "$DYN"
  contains dyn-inspect-symbolic 'x: float32\[N,3\]'
  contains dyn-inspect-unknown 'k: int64\[\?\]'
  ok dyn-run-default "$OSPREY" run "$DYN"
  contains dyn-default-shape 'x +float32\[1,3\]'
  ok dyn-run-shape "$OSPREY" run "$DYN" --shape x=4x3 --shape k=7 --output-dir "$TMP/dyn"
  contains dyn-shape 'x +float32\[4,3\]'
  contains dyn-int 'k +int64\[7\] +min=[0-9]+ max=[0-9]+'
  contains dyn-bool 'mask +bool\[2\] +true=[0-2]/2'
  if [[ -f "$TMP/dyn/out_with_odd_name.npy" && -f "$TMP/dyn/y.npy" && -f "$TMP/dyn/m.npy" ]]; then pass
  else fail "dyn-run-shape: output files: $(ls "$TMP/dyn")"; fi
  ok dyn-int-input "$OSPREY" run "$DYN" --input "k=$TMP/int1.npy"
  contains dyn-int-input-values 'out/with:odd name +int64\[2\] +min=5 max=7'
  err dyn-int-as-float 'float32' "$OSPREY" run "$DYN" --input "x=$TMP/int.npy"
  err dyn-shape-rank 'does not match' "$OSPREY" run "$DYN" --shape x=4
  ok dyn-bench-batch "$OSPREY" bench "$DYN" --batch 8 --iterations 3 --warmup 0 --json
  contains dyn-bench-batch-json '"batch": 8'
  contains dyn-bench-batch-shape '"shape": \[8, 3\]'
  # How a batch runs: k has no named first dim, so DYN keeps the whole batch; a Relu over x [N,3]
  # alone runs item by item when asked.
  contains dyn-bench-batch-split '"batch_split": "whole batch \(input .k. has no named symbolic first dim\)"'
  BATCHED="$TMP/batched.onnx"
  protoc --encode=onnx.ModelProto -I"$(dirname "$PROTO")" "$PROTO" >"$BATCHED" <<'TXT'
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "batched"
  node { op_type: "Relu" input: "x" output: "y" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim { dim_value: 3 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 } } }
}
TXT
  ok bench-batch-split-on "$OSPREY" bench "$BATCHED" --warmup 1 --iterations 2 --batch 3 --batch-split on
  contains bench-batch-split-on-line 'batch: 3 \(item by item\)'
  ok bench-batch-split-off "$OSPREY" bench "$BATCHED" --warmup 1 --iterations 2 --batch 3 --batch-split off
  contains bench-batch-split-off-line 'batch: 3 \(whole batch \(batch_split is off\)\)'
  ok inspect-batches "$OSPREY" inspect "$BATCHED" --optimized
  contains inspect-batches-line '^batches: whole batch \(no convolution'
  # --blocked-layout: one 8 -> 8 channel convolution is too small a region for auto, converts
  # with on, and stays channels-last with off.
  CONVS="$TMP/convs.onnx"
  protoc --encode=onnx.ModelProto -I"$(dirname "$PROTO")" "$PROTO" >"$CONVS" <<TXT
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "convs"
  node { op_type: "Conv" input: "x" input: "w" output: "c" }
  node { op_type: "Relu" input: "c" output: "y" }
  initializer { name: "w" data_type: 1 dims: 8 dims: 8 dims: 1 dims: 1 $(printf 'float_data: 0.125 %.0s' {1..64}) }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } dim { dim_value: 8 } dim { dim_value: 4 } dim { dim_value: 4 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 } } }
}
TXT
  ok inspect-blocked-on "$OSPREY" inspect "$CONVS" --optimized --blocked-layout on
  contains inspect-blocked-on-attr 'channels_blocked=8'
  contains inspect-blocked-on-in 'perm=\[0,3,1,2,4\]'
  for layout in auto off; do
    ok "inspect-blocked-$layout" "$OSPREY" inspect "$CONVS" --optimized --blocked-layout "$layout"
    contains "inspect-blocked-$layout-nhwc" 'channels_last=1'
    if grep -q channels_blocked "$TMP/out"; then fail "inspect-blocked-$layout: converted"; else pass; fi
  done
  ok run-blocked-on "$OSPREY" run "$CONVS" --blocked-layout on
  contains run-blocked-on-output 'y +float32\[1,8,4,4\]'
  ok bench-blocked-off "$OSPREY" bench "$CONVS" --warmup 1 --iterations 2 --blocked-layout off
  err bench-blocked-bad 'blocked-layout' "$OSPREY" bench "$CONVS" --blocked-layout sometimes
  err bench-blocked-compare 'single-model option' "$OSPREY" bench "$CONVS" --frameworks osprey --blocked-layout on
  # --winograd: a 3x3 stride-1 convolution of 8 channels is marked 2 with on, not with auto
  # (under 64 channels) nor off; the 1x1 one above never is.
  WINO="$TMP/wino.onnx"
  protoc --encode=onnx.ModelProto -I"$(dirname "$PROTO")" "$PROTO" >"$WINO" <<TXT
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "wino"
  node { op_type: "Conv" input: "x" input: "w" output: "y" attribute { name: "pads" type: INTS ints: 1 ints: 1 ints: 1 ints: 1 } }
  initializer { name: "w" data_type: 1 dims: 8 dims: 8 dims: 3 dims: 3 $(printf 'float_data: 0.0625 %.0s' {1..576}) }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } dim { dim_value: 8 } dim { dim_value: 6 } dim { dim_value: 6 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 } } }
}
TXT
  ok inspect-winograd-on "$OSPREY" inspect "$WINO" --optimized --winograd on
  contains inspect-winograd-on-attr 'winograd=2'
  for w in auto off; do
    ok "inspect-winograd-$w" "$OSPREY" inspect "$WINO" --optimized --winograd "$w"
    if grep -q winograd "$TMP/out"; then fail "inspect-winograd-$w: marked"; else pass; fi
  done
  ok inspect-winograd-1x1 "$OSPREY" inspect "$CONVS" --optimized --winograd on
  if grep -q winograd "$TMP/out"; then fail "inspect-winograd-1x1: marked"; else pass; fi
  ok run-winograd-on "$OSPREY" run "$WINO" --winograd on
  contains run-winograd-on-output 'y +float32\[1,8,6,6\]'
  ok bench-winograd-off "$OSPREY" bench "$WINO" --warmup 1 --iterations 2 --winograd off
  # --peak says when its rate is an effective one (Winograd convolutions counted at direct FLOPs)
  ok bench-peak-winograd-on "$OSPREY" bench "$WINO" --warmup 1 --iterations 2 --peak --winograd on
  contains bench-peak-winograd-note 'an effective rate: 1 convolution is marked for Winograd'
  ok bench-peak-winograd-json "$OSPREY" bench "$WINO" --warmup 1 --iterations 2 --peak --winograd on --json
  contains bench-peak-winograd-json-field '"winograd_marked_nodes": 1'
  ok bench-peak-winograd-off "$OSPREY" bench "$WINO" --warmup 1 --iterations 2 --peak --winograd off
  if grep -q 'effective rate' "$TMP/out"; then fail "bench-peak-winograd-off: noted"; else pass; fi
  err bench-winograd-bad 'winograd' "$OSPREY" bench "$WINO" --winograd sometimes
  err bench-winograd-compare 'single-model option' "$OSPREY" bench "$WINO" --frameworks osprey --winograd on
  # --disable-pass: a named pass is left out (here the layout pass, so no channels-last
  # convolution); a name that is not a pass is refused with the list of passes.
  ok inspect-disable-pass "$OSPREY" inspect "$CONVS" --optimized --disable-pass channels_last
  if grep -q 'channels_last=1' "$TMP/out"; then fail "inspect-disable-pass: still channels-last"; else pass; fi
  ok run-disable-pass "$OSPREY" run "$CONVS" --disable-pass channels_last --disable-pass conv_add_fusion
  contains run-disable-pass-output 'y +float32\[1,8,4,4\]'
  err inspect-disable-pass-bad "'no_such_pass' is not an optimization pass; the passes are: .*qkv_projection_merge" \
    "$OSPREY" inspect "$CONVS" --optimized --disable-pass no_such_pass
  err bench-disable-pass-compare 'single-model option' "$OSPREY" bench "$CONVS" --frameworks osprey --disable-pass channels_last
  # --passes: the load's phases and every pass that ran (the Conv + Relu fusion changes the
  # graph, 2 -> 1 nodes); a disabled pass is not listed. --dump-passes writes the graph before
  # and after each pass that changed it. --optimized runs the model twice for its memory plan.
  ok inspect-passes "$OSPREY" inspect "$CONVS" --passes --disable-pass channels_last
  contains inspect-passes-load '^load: [0-9.]+ ms \(import [0-9.]+, optimize [0-9.]+, prepare [0-9.]+\)'
  contains inspect-passes-fusion '^ +[0-9]+  conv_activation_fusion +yes +2 -> 1 +[0-9.]+$'
  contains inspect-passes-unchanged '^ +[0-9]+  gelu_fusion +no +'
  if grep -q ' channels_last ' "$TMP/out"; then fail "inspect-passes: lists a disabled pass"; else pass; fi
  ok inspect-passes-o0 "$OSPREY" inspect "$CONVS" --passes -O 0
  contains inspect-passes-o0-none '^passes: \(none ran\)'
  ok inspect-dump-passes "$OSPREY" inspect "$CONVS" --dump-passes "$TMP/dumps" --disable-pass channels_last
  contains inspect-dump-passes-line '^pass dumps: [1-9][0-9]* passes changed the graph'
  dump_after=$(ls "$TMP/dumps"/*-conv_activation_fusion.after.txt 2>/dev/null | head -1)
  if [[ -n "$dump_after" ]] && grep -q 'FusedConv.*activation="Relu"' "$dump_after" &&
     grep -q "Relu '" "${dump_after%.after.txt}.before.txt"; then pass; else fail "inspect-dump-passes: no fusion dump"; fi
  if ls "$TMP/dumps" | grep -q gelu_fusion; then fail "inspect-dump-passes: dumped an unchanged pass"; else pass; fi
  err inspect-dump-passes-bad 'dump-passes' "$OSPREY" inspect "$CONVS" --dump-passes /proc/no/such/dir
  ok inspect-memory-plan "$OSPREY" inspect "$CONVS" --optimized
  contains inspect-memory-plan-line '^memory plan \(x float32\[1,8,4,4\]\): planned; arena [0-9.]+ MiB'
  ok inspect-memory-plan-dyn "$OSPREY" inspect "$BATCHED" --optimized --shape x=5x3
  contains inspect-memory-plan-dyn-shape '^memory plan \(x float32\[5,3\]\): planned'
  # inputs it cannot make are reported on that line; the inspect itself succeeds
  ok inspect-memory-plan-bad-shape "$OSPREY" inspect "$BATCHED" --optimized --shape x=5x4
  contains inspect-memory-plan-bad-shape-line '^memory plan: not measured \(.*x'
else
  echo "test_cli: protoc or $PROTO missing; skipping symbolic-dim cases" >&2
fi

echo "test_cli: $PASSES passed, $FAILS failed"
[[ $FAILS -eq 0 ]]
