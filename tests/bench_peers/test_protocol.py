"""Every peer adapter, driven through the protocol as a subprocess on a tiny ONNX model."""

import platform

import numpy as np
import pytest

from peer_driver import FRAMEWORKS, cosine, framework_importable, load_request

ALL = list(FRAMEWORKS)

# Frameworks that cannot run the tiny ONNX model, and the reason their load must give.
TINY_LOAD_ERROR = {
    "torch": "no torch source module for this model",
    "tflite": "no .tflite file next to the model",
}

# precision "fast": either a reduced precision the framework reports, or a refusal naming why.
FAST_REFUSED = {
    "onnxruntime": "precision fast not available: onnxruntime CPU has no bf16 fast mode",
}
if platform.machine() == "x86_64":
    FAST_REFUSED["mnn"] = "precision fast not available: MNN's x86 CPU backend computes precision 'low' in fp32"


def _start(peer_factory, framework):
    peer = peer_factory(framework)
    hello = peer.send(cmd="hello")
    assert hello["ok"] is True and hello["framework"] == framework
    return peer, hello


@pytest.mark.parametrize("framework", ALL)
def test_hello_reports_availability(peer_factory, framework):
    _, hello = _start(peer_factory, framework)
    if framework_importable(framework):
        assert hello["available"] is True, hello
        assert isinstance(hello["version"], str) and hello["version"]
    else:
        assert hello["available"] is False
        assert "not installed" in hello["reason"], hello


@pytest.mark.parametrize("framework", ALL)
def test_hello_without_package_says_not_installed(peer_factory, framework, tiny):
    peer = peer_factory(framework, hide_module=FRAMEWORKS[framework])
    hello = peer.send(cmd="hello")
    assert hello == {"ok": True, "framework": framework, "available": False,
                     "reason": hello["reason"], "pin_threads": hello["pin_threads"],
                     "pin_threads_note": hello["pin_threads_note"]}
    assert "not installed" in hello["reason"], hello
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tiny["root"] / framework))
    assert load["ok"] is False and f"{framework} not available" in load["error"], load
    assert peer.quit() == ({"ok": True}, 0)


@pytest.mark.parametrize("framework", ALL)
def test_tiny_model_load_run_outputs(peer_factory, framework, tiny, tmp_path):
    peer, hello = _start(peer_factory, framework)
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tmp_path / "work", threads=2))
    if not hello["available"]:
        assert load["ok"] is False and "not available" in load["error"]
        return
    if framework in TINY_LOAD_ERROR:
        assert load["ok"] is False and TINY_LOAD_ERROR[framework] in load["error"], load
        return
    assert load["ok"] is True, load
    assert load["load_ms"] > 0
    assert load["precision_used"] and isinstance(load["settings"], dict) and load["settings"]
    threads = {k: v for k, v in load["settings"].items() if "thread" in k.lower()}
    assert 2 in threads.values(), ("the requested thread count is reported", load["settings"])

    run = peer.send(cmd="run", inputs_dir=str(tiny["inputs_dir"]), iterations=7, warmup=2)
    assert run["ok"] is True, run
    assert len(run["latencies_us"]) == 7 and all(t > 0 for t in run["latencies_us"])
    assert 0 < run["rss_bytes"] <= run["peak_rss_bytes"]

    out_dir = tmp_path / "out"
    outs = peer.send(cmd="outputs", inputs_dir=str(tiny["inputs_dir"]), out_dir=str(out_dir))
    assert outs["ok"] is True, outs
    assert outs["outputs"] == list(tiny["reference"])
    for name, want in tiny["reference"].items():
        got = np.load(out_dir / f"{name}.npy")
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert peer.quit() == ({"ok": True}, 0)


@pytest.mark.parametrize("framework", [f for f in ALL if f not in TINY_LOAD_ERROR])
def test_tiny_model_fast_precision(peer_factory, framework, tiny, tmp_path):
    peer, hello = _start(peer_factory, framework)
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tmp_path / "work", precision="fast"))
    if not hello["available"]:
        assert load["ok"] is False and "not available" in load["error"]
        return
    if framework in FAST_REFUSED:
        assert load["ok"] is False and FAST_REFUSED[framework] in load["error"], load
        return
    assert load["ok"] is True, load
    assert load["precision_used"] not in ("", None)
    outs = peer.send(cmd="outputs", inputs_dir=str(tiny["inputs_dir"]), out_dir=str(tmp_path / "out"))
    assert outs["ok"] is True, outs
    for name, want in tiny["reference"].items():
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert cosine(got, want) >= 0.99, (name, load["precision_used"])


BAD = [
    ("not json", "malformed command: not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"cmd": "fly"}', "unknown cmd \"fly\""),
    ('{"nocmd": 1}', "unknown cmd null"),
    ('{"cmd": "run", "inputs_dir": "/tmp", "iterations": 3}', "no model loaded"),
    ('{"cmd": "outputs", "inputs_dir": "/tmp", "out_dir": "/tmp/x"}', "no model loaded"),
    ('{"cmd": "load", "model": "relative.onnx"}', "must be an absolute path"),
    ('{"cmd": "load", "model": "/nonexistent/m.onnx"}', "model file not found"),
]


@pytest.mark.parametrize("framework", ALL)
def test_bad_commands_answer_and_keep_running(peer_factory, framework, tiny, tmp_path):
    peer, hello = _start(peer_factory, framework)
    for line, expected in BAD:
        answer = peer.send_line(line)
        assert answer["ok"] is False and expected in answer["error"], (line, answer)
    base = load_request(tiny["model"], tiny["feeds"], tmp_path / "work")
    if hello["available"]:
        bad_loads = [
            ({"threads": 0}, "field 'threads' must be in [1, 1024]"),
            ({"threads": "2"}, "field 'threads' must be an integer"),
            ({"precision": "int4"}, "precision must be one of"),
            ({"inputs": {"x": {"dtype": "float32", "shape": [1, -3]}}}, "shape must be a list of positive"),
            ({"inputs": {"x": {"dtype": "complex", "shape": [1]}}}, "dtype 'complex' is not one of"),
            ({"inputs": {"a/b": {"dtype": "float32", "shape": [1]}}}, "cannot be used as a file name"),
            ({"options": {"no_such_option": 1}}, "unknown option 'no_such_option'"),
        ]
        for change, expected in bad_loads:
            answer = peer.send(**{**base, **change})
            assert answer["ok"] is False and expected in answer["error"], (change, answer)
    if hello["available"] and framework not in TINY_LOAD_ERROR:
        assert peer.send(**base)["ok"] is True
        bad_runs = [
            ({"iterations": 0}, "field 'iterations' must be in"),
            ({"warmup": -1}, "field 'warmup' must be in"),
            ({"inputs_dir": str(tmp_path / "nowhere")}, "input file not found"),
        ]
        run = {"cmd": "run", "inputs_dir": str(tiny["inputs_dir"]), "iterations": 2}
        for change, expected in bad_runs:
            answer = peer.send(**{**run, **change})
            assert answer["ok"] is False and expected in answer["error"], (change, answer)
        wrong = tmp_path / "wrong_inputs"
        wrong.mkdir()
        np.save(wrong / "x.npy", np.zeros((1, 3, 8, 9), np.float32))
        answer = peer.send(**{**run, "inputs_dir": str(wrong)})
        assert answer["ok"] is False and "load declared float32[1, 3, 8, 8]" in answer["error"], answer
        assert peer.send(**run)["ok"] is True, "still serving after the errors"
    assert peer.send(cmd="hello") == hello
    assert peer.quit() == ({"ok": True}, 0)


@pytest.mark.parametrize("framework", ALL)
def test_end_of_input_exits_zero(peer_factory, framework):
    peer, _ = _start(peer_factory, framework)
    peer.proc.stdin.close()
    assert peer.proc.wait(timeout=30) == 0


@pytest.mark.parametrize("framework", ["onnxruntime", "openvino", "ncnn", "mnn"])
def test_unsupported_op_is_named(peer_factory, framework, tmp_path):
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Frobnicate", ["r"], ["y"], domain="com.example")]
    graph = helper.make_graph(nodes, "custom",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "custom.onnx"))
    peer, hello = _start(peer_factory, framework)
    feeds = {"x": np.zeros((1, 3, 4, 4), np.float32)}
    load = peer.send(**load_request(tmp_path / "custom.onnx", feeds, tmp_path / "work"))
    assert load["ok"] is False and "Frobnicate" in load["error"], load
    assert peer.send(cmd="hello") == hello
    assert peer.quit() == ({"ok": True}, 0)
