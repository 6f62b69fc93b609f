"""The TFLite peer on a model that exists in both formats: a fully connected layer written
as ONNX (Gemm) and as .tflite (FULLY_CONNECTED, built here with LiteRT's flatbuffer schema)."""

import numpy as np
import pytest

from peer_driver import framework_importable, load_request, reference_outputs, write_inputs

IN, OUT = 16, 4


def _weights():
    rng = np.random.RandomState(11)
    return rng.randn(OUT, IN).astype(np.float32), rng.randn(OUT).astype(np.float32)


def make_fc_onnx(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w, b = _weights()
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], "fc",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, OUT])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def make_fc_tflite(path):
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    w, b = _weights()

    def buffer(array=None):
        buf = s.BufferT()
        if array is not None:
            buf.data = np.frombuffer(array.tobytes(), np.uint8)
        return buf

    def tensor(name, shape, buf):
        t = s.TensorT()
        t.name, t.shape, t.type, t.buffer = name, np.array(shape, np.int32), s.TensorType.FLOAT32, buf
        return t

    op = s.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, np.array([0, 1, 2], np.int32), np.array([3], np.int32)
    op.builtinOptionsType = s.BuiltinOptions.FullyConnectedOptions
    op.builtinOptions = s.FullyConnectedOptionsT()
    sub = s.SubGraphT()
    sub.tensors = [tensor("x", [1, IN], 0), tensor("w", [OUT, IN], 1), tensor("b", [OUT], 2),
                   tensor("y", [1, OUT], 0)]
    sub.inputs, sub.outputs, sub.operators = np.array([0], np.int32), np.array([3], np.int32), [op]
    code = s.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = s.BuiltinOperator.FULLY_CONNECTED
    code.version = 1
    model = s.ModelT()
    model.version, model.operatorCodes, model.subgraphs = 3, [code], [sub]
    model.buffers = [buffer(), buffer(w), buffer(b)]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    path.write_bytes(builder.Output())


@pytest.fixture
def fc(tmp_path):
    if not framework_importable("tflite"):
        pytest.fail("ai-edge-litert is not installed here: run scripts/setup.sh")
    make_fc_onnx(tmp_path / "fc.onnx")
    make_fc_tflite(tmp_path / "fc.tflite")
    feeds = {"x": np.random.RandomState(5).randn(1, IN).astype(np.float32)}
    write_inputs(tmp_path / "inputs", feeds)
    return {"model": tmp_path / "fc.onnx", "feeds": feeds, "inputs_dir": tmp_path / "inputs",
            "reference": reference_outputs(tmp_path / "fc.onnx", feeds)}


def test_tflite_runs_the_tflite_next_to_the_model(peer_factory, fc, tmp_path):
    peer = peer_factory("tflite")
    load = peer.send(**load_request(fc["model"], fc["feeds"], tmp_path / "work", threads=2))
    assert load["ok"] is True, load
    assert load["settings"]["num_threads"] == 2 and "fc.tflite" in load["notes"] and "by name" in load["notes"]
    run = peer.send(cmd="run", inputs_dir=str(fc["inputs_dir"]), iterations=5, warmup=1)
    assert run["ok"] is True and len(run["latencies_us"]) == 5 and min(run["latencies_us"]) > 0, run
    outs = peer.send(cmd="outputs", inputs_dir=str(fc["inputs_dir"]), out_dir=str(tmp_path / "out"))
    assert outs == {"ok": True, "outputs": ["y"]}
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), fc["reference"]["y"], rtol=1e-5, atol=1e-5)
    fast = peer.send(**load_request(fc["model"], fc["feeds"], tmp_path / "work", precision="fast"))
    assert fast["ok"] is False and "precision fast not available" in fast["error"]
    assert peer.quit() == ({"ok": True}, 0)


def test_tflite_refuses_a_layout_it_cannot_resize(peer_factory, fc, tmp_path):
    peer = peer_factory("tflite")
    feeds = {"x": np.zeros((1, IN + 1), np.float32)}
    load = peer.send(**load_request(fc["model"], feeds, tmp_path / "work"))
    assert load["ok"] is False and "only the batch dimension may differ" in load["error"], load
