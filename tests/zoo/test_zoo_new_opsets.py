"""The zoo models restated at opsets 18 and 21 (onnx's version converter: Reduce* and Split
take their axes and sizes as inputs, Resize its 18/19 form, and so on) optimize to the same
graph and give the same outputs as the opset-17 originals.

Why: exporters now write opset 18 and later; a fusion pass that reads an attribute that
became an input would silently stop fusing, and a kernel that misreads the new form would
compute something else. The node conformance cases check single ops; this checks the
passes and kernels on whole models.

    .venv/bin/python -m pytest tests/zoo/test_zoo_new_opsets.py
"""

import subprocess

import numpy as np
import onnx
import pytest
from onnx import version_converter
from test_zoo_fusions import optimized_ops

pytestmark = pytest.mark.zoo

MODELS = ["mobilenetv2", "efficientnet_lite0", "minilm", "ppocr_det", "silero_vad"]
# Inputs the generated random data would get wrong: shapes (osprey run --shape) or files.
SHAPES = {"minilm": ["input_ids=1x64", "attention_mask=1x64"], "ppocr_det": ["x=1x3x96x128"]}


def silero_inputs(tmp_path):
    """One 16 kHz chunk (64 context + 512 samples), zero state, sr 16000."""
    rng = np.random.default_rng(3)
    files = {"input": rng.uniform(-0.5, 0.5, (1, 576)).astype(np.float32),
             "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    args = []
    for name, value in files.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return args


def outputs(osprey_bin, path, out_dir, extra):
    proc = subprocess.run([str(osprey_bin), "run", str(path), "--seed", "3", "-o", str(out_dir), *extra],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {p.stem: np.load(p) for p in sorted(out_dir.glob("*.npy"))}


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("model", MODELS)
def test_restated_model_optimizes_and_computes_the_same(zoo_dir, osprey_bin, tmp_path, model, opset):
    original = zoo_dir / f"{model}.onnx"
    m = onnx.load(str(original))
    assert max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")) < opset
    converted = version_converter.convert_version(m, opset)
    path = tmp_path / f"{model}_opset{opset}.onnx"
    onnx.save(converted, str(path))

    want_ops, got_ops = optimized_ops(osprey_bin, original), optimized_ops(osprey_bin, path)
    assert got_ops == want_ops, f"{model} at opset {opset}: {dict(got_ops)} against {dict(want_ops)}"

    extra = silero_inputs(tmp_path) if model == "silero_vad" else [a for s in SHAPES.get(model, []) for a in ("--shape", s)]
    want = outputs(osprey_bin, original, tmp_path / "want", extra)
    got = outputs(osprey_bin, path, tmp_path / "got", extra)
    assert got.keys() == want.keys() and want
    for name in want:
        assert got[name].shape == want[name].shape, name
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6, err_msg=f"{model} {name}")
