"""Zoo agreement for the int8 models: Osprey's CLI against onnxruntime running the same file
with its graph optimizations off, which computes the graph as written (for a QDQ model, float
convolutions between QuantizeLinear / DequantizeLinear pairs; for a dynamically quantized one,
DynamicQuantizeLinear, MatMulInteger and the float rescale as separate nodes).

Osprey fuses each quantized convolution into one int8 convolution with exact int32 sums; a
value that falls within float rounding of a quantization boundary then lands one step away,
and the step propagates through the layers after it. onnxruntime's own int8 kernels (its
optimizations on) differ from its unoptimized run the same way: on EfficientNet-Lite0 int8
both have cosine 0.9993 against it on the photographs. So the bounds here are those of one
quantized run against another: cosine >= 0.998 and max|err| <= 5% of max(1, max|ref|) at
every optimization level, and the photographs' top-1 classes exactly onnxruntime's.

A dynamically quantized model (MiniLM int8) computes the same graph with exact int32 sums at
levels 0 and 1; a float rounding difference (a LayerNorm kernel's) can still move one value
across a quantization step (measured: max|err| 0.0065 of 6.1 at one token), so there it must
agree to cosine 0.9999 and max|err| 1%. At level 2 the fused
attention and Gelu round differently, and each DynamicQuantizeLinear re-derives its scale
from the float values before it, so some values move across a quantization step and the
steps add up over the layers (measured: cosine 0.9972, max|err| 0.11 of 6.1 on the random
tokens). That is far inside the quantization's own error (the int8 model is at cosine
0.94-0.95 from the float one), so level 2 is held to cosine 0.995 against onnxruntime and to
being as close to the float model as onnxruntime's int8 run is (cosine at most 0.002 lower).
"""

import pytest

import sample_inputs
from test_zoo import check_output, cosine, file_stem, run_osprey

pytestmark = pytest.mark.zoo

MIN_COSINE = 0.998
RTOL_OF_MAX = 0.05
# Dynamically quantized models and the float models they were made from.
DYNAMIC = {"minilm_int8": "minilm", "efficientnet_lite0_int8_dyn": "efficientnet_lite0"}

CASES = [(model, case, level) for model in sorted(sample_inputs.QUANTIZED)
         for case in sample_inputs.CASES[model] for level in (2, 1, 0)]


@pytest.mark.parametrize("model,case,level", CASES, ids=[f"{m}-{c}-O{lv}" for m, c, lv in CASES])
def test_int8_matches_onnxruntime(zoo_dir, osprey_bin, ort_sessions, tmp_path, model, case, level):
    feeds = sample_inputs.CASES[model][case]()
    path = zoo_dir / f"{model}.onnx"
    sess = ort_sessions(path)
    refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    got = run_osprey(osprey_bin, path, feeds, tmp_path, ("-O", str(level)))
    rtol, min_cos = RTOL_OF_MAX, MIN_COSINE
    if model in DYNAMIC:
        rtol, min_cos = (0.05, 0.995) if level >= 2 else (0.01, 0.9999)
        fsess = ort_sessions(zoo_dir / f"{DYNAMIC[model]}.onnx")
        floats = dict(zip([o.name for o in fsess.get_outputs()], fsess.run(None, feeds)))
    for name, ref in refs.items():
        ours = got[file_stem(name)]
        print(check_output(name, ours, ref, rtol, min_cos))
        if model in DYNAMIC:
            ours_to_float, ort_to_float = cosine(ours, floats[name]), cosine(ref, floats[name])
            print(f"  {name} to the float model: cosine {ours_to_float:.5f}, onnxruntime int8 {ort_to_float:.5f}")
            assert ours_to_float >= ort_to_float - 0.002, (
                f"{name}: cosine to the float model {ours_to_float:.5f}, onnxruntime int8 {ort_to_float:.5f}")
        if case.startswith("photos"):
            assert list(ours.argmax(1)) == list(ref.argmax(1)), (
                f"top-1 {list(ours.argmax(1))}, onnxruntime {list(ref.argmax(1))}")
