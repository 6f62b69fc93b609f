"""Each installed peer on a real zoo model (MobileNetV2), fp32 outputs against onnxruntime."""

import numpy as np
import pytest

from peer_driver import FRAMEWORKS, ZOO, cosine, framework_importable, load_request, write_inputs

MODEL = ZOO / "mobilenetv2.onnx"
# TFLite runs only a .tflite next to the model; the zoo ships none (the peer says so).
RUNS_MOBILENET = [f for f in FRAMEWORKS if f != "tflite"]


@pytest.fixture(scope="module")
def mobilenet(tmp_path_factory):
    if not MODEL.is_file():
        pytest.skip(f"{MODEL} not generated (run tools/zoo/make_zoo.py --only mobilenetv2)")
    from peer_driver import reference_outputs

    root = tmp_path_factory.mktemp("mobilenet")
    feeds = {"input": np.random.RandomState(0).randn(1, 3, 224, 224).astype(np.float32)}
    write_inputs(root / "inputs", feeds)
    return {"feeds": feeds, "inputs_dir": root / "inputs", "reference": reference_outputs(MODEL, feeds)}


@pytest.mark.parametrize("framework", RUNS_MOBILENET)
def test_mobilenetv2_agrees_with_onnxruntime(peer_factory, framework, mobilenet, tmp_path):
    if not framework_importable(framework):
        pytest.fail(f"{framework} is not installed here: run scripts/setup.sh")
    peer = peer_factory(framework, timeout=300)
    load = peer.send(**load_request(MODEL, mobilenet["feeds"], tmp_path / "work", threads=1))
    assert load["ok"] is True, (load, peer.stderr())
    run = peer.send(cmd="run", inputs_dir=str(mobilenet["inputs_dir"]), iterations=2, warmup=1)
    assert run["ok"] is True and len(run["latencies_us"]) == 2, run
    outs = peer.send(cmd="outputs", inputs_dir=str(mobilenet["inputs_dir"]), out_dir=str(tmp_path / "out"))
    assert outs["ok"] is True and outs["outputs"] == ["logits"], outs
    got = np.load(tmp_path / "out" / "logits.npy")
    want = mobilenet["reference"]["logits"]
    assert got.shape == want.shape
    assert cosine(got, want) >= 0.999, cosine(got, want)
    assert peer.quit() == ({"ok": True}, 0)


def test_tflite_on_mobilenetv2_says_why_not(peer_factory, mobilenet, tmp_path):
    peer = peer_factory("tflite")
    load = peer.send(**load_request(MODEL, mobilenet["feeds"], tmp_path / "work"))
    assert load["ok"] is False and "no .tflite file next to the model" in load["error"], load
