"""Drives one peer adapter (bench/peers/<framework>.py) as a subprocess over its JSON-lines
protocol, the way `osprey bench` does, plus the tiny ONNX model the tests run on."""

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "bench" / "peers"
ZOO = REPO / "models"

# Frameworks and the pip distribution each adapter needs (the one hello names when absent).
FRAMEWORKS = {
    "onnxruntime": "onnxruntime",
    "openvino": "openvino",
    "torch": "torch",
    "tflite": "ai_edge_litert",
    "ncnn": "ncnn",
    "mnn": "MNN",
}

# Run the adapter with `module` made unimportable, to see what hello says on a machine
# without the package.
_HIDE = """
import runpy, sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name == {mod!r} or name.startswith({mod!r} + "."):
            raise ModuleNotFoundError("No module named " + repr(name), name=name)
sys.meta_path.insert(0, Hide())
sys.argv = [{script!r}]
runpy.run_path({script!r}, run_name="__main__")
"""


class Peer:
    def __init__(self, framework, log_dir, hide_module=None, timeout=120.0):
        script = str(PEERS / f"{framework}.py")
        if hide_module:
            # run_path does not put the script's folder on sys.path; the script expects it.
            code = f"import sys; sys.path.insert(0, {str(PEERS)!r})\n" + _HIDE.format(
                mod=hide_module, script=script)
            argv = [sys.executable, "-c", code]
        else:
            argv = [sys.executable, script]
        self.stderr_path = Path(log_dir) / f"{framework}.stderr"
        self._stderr = open(self.stderr_path, "wb")
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, cwd=str(REPO))

    def send_line(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return self._answer()

    def send(self, **request):
        return self.send_line(json.dumps(request))

    def _answer(self):
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer within {self.timeout} s; stderr:\n{self.stderr()}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                break
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError(f"adapter closed stdout (exit {self.proc.poll()}); stderr:\n{self.stderr()}")
        return json.loads(line)

    def stderr(self):
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-4000:]

    def quit(self):
        answer = self.send(cmd="quit")
        code = self.proc.wait(timeout=30)
        self._stderr.close()
        return answer, code

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self._stderr.closed:
            self._stderr.close()


def framework_importable(framework):
    """Whether the test's own interpreter can import the framework's package."""
    import importlib.util

    return importlib.util.find_spec(FRAMEWORKS[framework]) is not None


# ---- the tiny model ----------------------------------------------------------------

TINY_INPUT = "x"
TINY_SHAPE = [1, 3, 8, 8]


def make_tiny_model(path):
    """Conv(3->4, 3x3, pad 1) + Relu + Flatten + Gemm(256->10), fixed seed, opset 13."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.RandomState(7)
    w = numpy_helper.from_array(rng.randn(4, 3, 3, 3).astype(np.float32) * 0.3, "w")
    b = numpy_helper.from_array(rng.randn(4).astype(np.float32) * 0.1, "b")
    fc_w = numpy_helper.from_array(rng.randn(10, 256).astype(np.float32) * 0.1, "fc_w")
    fc_b = numpy_helper.from_array(rng.randn(10).astype(np.float32) * 0.1, "fc_b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("Flatten", ["relu"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, TINY_SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[w, b, fc_w, fc_b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def reference_outputs(model, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def load_request(model, inputs, work_dir, precision="fp32", threads=1, **extra):
    req = {"cmd": "load", "model": str(model), "threads": threads, "precision": precision,
           "batch": 1, "work_dir": str(work_dir),
           "inputs": {n: {"dtype": a.dtype.name, "shape": list(a.shape)} for n, a in inputs.items()}}
    req.update(extra)
    return req


def write_inputs(directory, feeds):
    os.makedirs(directory, exist_ok=True)
    for name, value in feeds.items():
        np.save(Path(directory) / f"{name}.npy", value)
