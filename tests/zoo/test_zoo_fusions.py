"""The zoo models keep their fusions: `osprey inspect MODEL --optimized` at the default level
must show every attention as one com.osprey.Attention, every product and convolution fused,
and none of the ops those fusions take in left over.

Why: the zoo agreement tests compare outputs only, and an unfused graph computes the same
outputs more slowly. A change to shape folding once left the dead Shape of each attention's
output in place, which stopped attention_fusion on MiniLM and BERT-base without failing a
test; these counts would have.

    .venv/bin/python -m pytest tests/zoo/test_zoo_fusions.py
"""

import collections
import re
import subprocess

import onnx
import pytest

pytestmark = pytest.mark.zoo

# model: ops of the optimized graph that the fusions take in, none of which may be left over.
ABSENT = {
    "minilm": ("MatMul", "Softmax", "Transpose", "Reshape", "Erf"),
    "bert_base": ("MatMul", "Softmax", "Transpose", "Reshape", "Erf"),
    "resnet50": ("Conv", "Relu", "Add", "Gemm"),
    "mobilenetv2": ("Conv", "Clip", "Add", "Gemm"),
    "efficientnet_lite0": ("Conv", "Clip", "Relu", "Add", "Gemm", "Shape"),
}


def expected_counts(path):
    """From the source model: one FusedConv per Conv, one Attention per Softmax (each a
    self-attention), and one FusedMatMul per product by constant weights, less two per attention
    (its Q, K and V products run as one)."""
    graph = onnx.load(str(path), load_external_data=False).graph
    consts = {t.name for t in graph.initializer}
    ops = collections.Counter(n.op_type for n in graph.node)
    products = sum(1 for n in graph.node
                   if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1 and n.input[1] in consts)
    want = {"com.osprey.FusedMatMul": products - 2 * ops["Softmax"]}
    if ops["Conv"]:
        want["com.osprey.FusedConv"] = ops["Conv"]
    if ops["Softmax"]:
        want["com.osprey.Attention"] = ops["Softmax"]
    return want


def optimized_ops(osprey_bin, path):
    proc = subprocess.run([str(osprey_bin), "inspect", str(path), "--optimized"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout.split("\noptimized graph", 1)
    assert len(text) == 2, proc.stdout[-2000:]
    return collections.Counter(re.findall(r"^  ([A-Za-z.]+) '", text[1], flags=re.M))


@pytest.mark.parametrize("model", sorted(ABSENT))
def test_optimized_graph_keeps_its_fusions(zoo_dir, osprey_bin, model):
    path = zoo_dir / f"{model}.onnx"
    ops = optimized_ops(osprey_bin, path)
    for op, count in expected_counts(path).items():
        assert ops[op] == count, f"{model}: {ops[op]} {op}, expected {count}; ops: {dict(ops)}"
    for op in ABSENT[model]:
        assert ops[op] == 0, f"{model}: {ops[op]} {op} left unfused; ops: {dict(ops)}"
