"""Shared by the bench end-to-end scripts (bench, select, HTML render): a failure collector and
the tiny model they benchmark."""

import sys

FAILURES = []


def check(cond, what):
    """Records (and prints) a failed check; the script exits non-zero if any were recorded."""
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def tiny_model(path):
    """Writes x[N,8] -> Relu -> MatMul(w[8,5]) -> logits[N,5] (opset 13) to `path`."""
    import numpy as np
    from onnx import TensorProto, helper, save

    w = np.linspace(-1, 1, 8 * 5, dtype=np.float32).reshape(8, 5)
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("MatMul", ["h", "w"], ["logits"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 5])],
        [helper.make_tensor("w", TensorProto.FLOAT, [8, 5], w.flatten().tolist())])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
