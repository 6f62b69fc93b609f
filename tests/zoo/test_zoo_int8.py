"""Zoo agreement for the int8 (QDQ) models: Osprey's CLI against onnxruntime running the same
file with its graph optimizations off, which computes the QDQ graph as written (float
convolutions between QuantizeLinear / DequantizeLinear pairs).

Osprey fuses each quantized convolution into one int8 convolution with exact int32 sums; a
value that falls within float rounding of a quantization boundary then lands one step away,
and the step propagates through the layers after it. onnxruntime's own int8 kernels (its
optimizations on) differ from its unoptimized run the same way: on EfficientNet-Lite0 int8
both have cosine 0.9993 against it on the photographs. So the bounds here are those of one
quantized run against another: cosine >= 0.998 and max|err| <= 5% of max(1, max|ref|) at
every optimization level, and the photographs' top-1 classes exactly onnxruntime's.

    .venv/bin/python -m pytest tests/zoo/test_zoo_int8.py
"""

import pytest

import sample_inputs
from test_zoo import check_output, file_stem, run_osprey

pytestmark = pytest.mark.zoo

MIN_COSINE = 0.998
RTOL_OF_MAX = 0.05

CASES = [(model, case, level) for model in sorted(sample_inputs.QUANTIZED)
         for case in sample_inputs.CASES[model] for level in (2, 1, 0)]


@pytest.mark.parametrize("model,case,level", CASES, ids=[f"{m}-{c}-O{lv}" for m, c, lv in CASES])
def test_int8_matches_onnxruntime(zoo_dir, osprey_bin, ort_sessions, tmp_path, model, case, level):
    feeds = sample_inputs.CASES[model][case]()
    path = zoo_dir / f"{model}.onnx"
    sess = ort_sessions(path)
    refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    got = run_osprey(osprey_bin, path, feeds, tmp_path, ("-O", str(level)))
    for name, ref in refs.items():
        ours = got[file_stem(name)]
        print(check_output(name, ours, ref, RTOL_OF_MAX, MIN_COSINE))
        if case.startswith("photos"):
            assert list(ours.argmax(1)) == list(ref.argmax(1)), (
                f"top-1 {list(ours.argmax(1))}, onnxruntime {list(ref.argmax(1))}")
