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

import pytest

pytestmark = pytest.mark.zoo

# model: (op counts the optimized graph must have, ops it must not have)
EXPECTED = {
    "minilm": ({"com.osprey.Attention": 6, "com.osprey.FusedMatMul": 24},
               ("MatMul", "Softmax", "Transpose", "Reshape", "Erf")),
    "bert_base": ({"com.osprey.Attention": 12, "com.osprey.FusedMatMul": 48},
                  ("MatMul", "Softmax", "Transpose", "Reshape", "Erf")),
    "resnet50": ({"com.osprey.FusedConv": 53, "com.osprey.FusedMatMul": 1},
                 ("Conv", "Relu", "Add", "Gemm")),
    "mobilenetv2": ({"com.osprey.FusedConv": 52, "com.osprey.FusedMatMul": 1},
                    ("Conv", "Clip", "Add", "Gemm")),
    "efficientnet_lite0": ({"com.osprey.FusedConv": 49, "com.osprey.FusedMatMul": 1},
                           ("Conv", "Clip", "Relu", "Add", "Gemm", "Shape")),
}


def optimized_ops(osprey_bin, path):
    proc = subprocess.run([str(osprey_bin), "inspect", str(path), "--optimized"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout.split("\noptimized graph", 1)
    assert len(text) == 2, proc.stdout[-2000:]
    return collections.Counter(re.findall(r"^  ([A-Za-z.]+) '", text[1], flags=re.M))


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_optimized_graph_keeps_its_fusions(zoo_dir, osprey_bin, model):
    ops = optimized_ops(osprey_bin, zoo_dir / f"{model}.onnx")
    want, absent = EXPECTED[model]
    for op, count in want.items():
        assert ops[op] == count, f"{model}: {ops[op]} {op}, expected {count}; ops: {dict(ops)}"
    for op in absent:
        assert ops[op] == 0, f"{model}: {ops[op]} {op} left unfused; ops: {dict(ops)}"
