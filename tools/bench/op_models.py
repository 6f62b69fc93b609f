"""Writes one-op models with the shapes they take in common vision, speech and language
networks (YOLO-style heads, U-Nets, GANs, segmentation and attention layers), for timing the
engine's kernels for single ops against onnxruntime's; compare_ort.py makes up every input
(float32, int64 ids below 1000, bool):

    .venv/bin/python tools/bench/op_models.py --out /tmp/ops
    .venv/bin/python tools/bench/compare_ort.py --zoo /tmp/ops --threads 1 2 --rounds 3 \\
        --iterations 30 --models tanh exp softmax_mid reducemax add_bcast argmax resize_linear ...

(the names are the keys of MODELS below).
"""

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def floats(values, name):
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


def ints(values, name):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def node(op, inputs, **attrs):
    return helper.make_node(op, inputs, ["y"], **attrs)


# name: (node, [(input, shape)], initializers)
MODELS = {
    "tanh": (node("Tanh", ["x"]), [("x", [1, 128, 80, 80])], []),
    "exp": (node("Exp", ["x"]), [("x", [1, 128, 80, 80])], []),
    "instnorm": (node("InstanceNormalization", ["x", "s", "b"]), [("x", [1, 64, 128, 128])],
                 [floats(np.ones(64), "s"), floats(np.zeros(64), "b")]),
    "add_bcast": (node("Add", ["x", "b"]), [("x", [1, 256, 40, 40]), ("b", [1, 256, 1, 1])], []),
    "mul_same": (node("Mul", ["x", "b"]), [("x", [1, 128, 80, 80]), ("b", [1, 128, 80, 80])], []),
    "concat": (node("Concat", ["x", "b"], axis=1), [("x", [1, 128, 80, 80]), ("b", [1, 128, 80, 80])], []),
    "pad": (node("Pad", ["x", "p"]), [("x", [1, 64, 128, 128])], [ints([0, 0, 1, 1, 0, 0, 1, 1], "p")]),
    "slice": (node("Slice", ["x", "st", "en", "ax"]), [("x", [1, 128, 80, 80])],
              [ints([0], "st"), ints([64], "en"), ints([1], "ax")]),
    "reducemax": (node("ReduceMax", ["x"], axes=[1]), [("x", [1, 128, 80, 80])], []),
    "softmax_mid": (node("Softmax", ["x"], axis=1), [("x", [1, 85, 80, 80])], []),
    "maxpool": (node("MaxPool", ["x"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]), [("x", [1, 256, 20, 20])], []),
    "resize_nearest": (node("Resize", ["x", "", "s"], mode="nearest"), [("x", [1, 256, 40, 40])],
                       [floats([1, 1, 2, 2], "s")]),
    "resize_linear": (node("Resize", ["x", "", "s"], mode="linear"), [("x", [1, 64, 80, 80])],
                      [floats([1, 1, 2, 2], "s")]),
    "transpose_head": (node("Transpose", ["x"], perm=[0, 1, 3, 4, 2]), [("x", [1, 3, 85, 40, 40])], []),
    "transpose_nhwc": (node("Transpose", ["x"], perm=[0, 2, 3, 1]), [("x", [1, 64, 56, 56])], []),
    "transpose_nchw": (node("Transpose", ["x"], perm=[0, 3, 1, 2]), [("x", [1, 56, 56, 64])], []),
    "transpose_heads": (node("Transpose", ["x"], perm=[0, 2, 1, 3]), [("x", [1, 128, 12, 64])], []),
    "split": (helper.make_node("Split", ["x", "sp"], ["y", "y2"], axis=1), [("x", [1, 256, 40, 40])],
              [ints([128, 128], "sp")]),
    "gather_rows": (node("Gather", ["w", "i"], axis=0), [("i", [1, 128])], []),
    "where": (node("Where", ["c", "x", "b"]), [("x", [1, 12, 128, 128]), ("b", [1, 12, 128, 128])], []),
    "relu": (node("Relu", ["x"]), [("x", [1, 128, 80, 80])], []),
    "leaky_relu": (node("LeakyRelu", ["x"], alpha=0.1), [("x", [1, 128, 80, 80])], []),
    "clip": (node("Clip", ["x", "lo", "hi"]), [("x", [1, 128, 80, 80])], [floats(0.0, "lo"), floats(6.0, "hi")]),
    "sqrt": (node("Sqrt", ["x"]), [("x", [1, 128, 80, 80])], []),
    "pow2": (node("Pow", ["x", "e"]), [("x", [1, 128, 80, 80])], [floats(2.0, "e")]),
    "erf": (node("Erf", ["x"]), [("x", [1, 128, 3072])], []),
    "argmax": (node("ArgMax", ["x"], axis=1, keepdims=0), [("x", [1, 80, 8400])], []),
    "argmax_last": (node("ArgMax", ["x"], axis=-1, keepdims=0), [("x", [64, 8192])], []),
    "gap": (node("GlobalAveragePool", ["x"]), [("x", [1, 512, 20, 20])], []),
    "avgpool": (node("AveragePool", ["x"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
                [("x", [1, 64, 80, 80])], []),
    "batchnorm": (node("BatchNormalization", ["x", "s", "b", "m", "v"]), [("x", [1, 64, 80, 80])],
                  [floats(np.ones(64), "s"), floats(np.zeros(64), "b"), floats(np.zeros(64), "m"),
                   floats(np.ones(64), "v")]),
    "cast_half": (node("Cast", ["x"], to=TensorProto.FLOAT16), [("x", [1, 128, 80, 80])], []),
    "max2": (node("Max", ["x", "b"]), [("x", [1, 128, 80, 80]), ("b", [1, 128, 80, 80])], []),
    "hardsigmoid": (node("HardSigmoid", ["x"]), [("x", [1, 128, 80, 80])], []),
    "prelu": (node("PRelu", ["x", "s"]), [("x", [1, 64, 80, 80])], [floats(np.full((64, 1, 1), 0.25), "s")]),
    "elu": (node("Elu", ["x"]), [("x", [1, 128, 80, 80])], []),
    "softplus": (node("Softplus", ["x"]), [("x", [1, 128, 80, 80])], []),
    "log": (node("Log", ["x"]), [("x", [1, 128, 80, 80])], []),
    "pow_half": (node("Pow", ["x", "e"]), [("x", [1, 128, 80, 80])], [floats(0.5, "e")]),
    "sum3": (node("Sum", ["x", "b", "c"]), [("x", [1, 64, 80, 80]), ("b", [1, 64, 80, 80]), ("c", [1, 64, 80, 80])], []),
    "expand": (node("Expand", ["x", "sh"]), [("x", [1, 64, 1, 80])], [ints([1, 64, 80, 80], "sh")]),
    "tile": (node("Tile", ["x", "r"]), [("x", [1, 64, 40, 40])], [ints([1, 1, 2, 2], "r")]),
    "reduce_l2": (node("ReduceL2", ["x"], axes=[1]), [("x", [1, 128, 80, 80])], []),
    "logsumexp": (node("ReduceLogSumExp", ["x"], axes=[-1]), [("x", [1, 12, 128, 128])], []),
    "depth_to_space": (node("DepthToSpace", ["x"], blocksize=2), [("x", [1, 256, 40, 40])], []),
    "topk": (helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=-1), [("x", [1, 8400])], [ints([100], "k")]),
    "cumsum": (node("CumSum", ["x", "ax"]), [("x", [1, 128, 80, 80])], [ints(1, "ax")]),
    "softsign": (node("Softsign", ["x"]), [("x", [1, 128, 80, 80])], []),
    "gelu_op": (node("Gelu", ["x"]), [("x", [1, 128, 3072])], []),
    "lpnorm": (node("LpNormalization", ["x"], axis=-1), [("x", [128, 768])], []),
    "einsum": (node("Einsum", ["x", "b"], equation="bhid,bhjd->bhij"), [("x", [1, 12, 128, 64]), ("b", [1, 12, 128, 64])], []),
    "greater": (node("Greater", ["x", "b"]), [("x", [1, 128, 80, 80]), ("b", [1, 128, 80, 80])], []),
    "equal_bcast": (node("Equal", ["x", "b"]), [("x", [1, 12, 128, 128]), ("b", [1, 1, 1, 128])], []),
    "cast_bool": (node("Cast", ["c"], to=TensorProto.FLOAT), [("c", [1, 12, 128, 128])], []),
    "floor": (node("Floor", ["x"]), [("x", [1, 128, 80, 80])], []),
    "round": (node("Round", ["x"]), [("x", [1, 128, 80, 80])], []),
    "gather_elements": (node("GatherElements", ["x", "i"], axis=1), [("x", [1, 1000, 640]), ("i", [1, 100, 640])], []),
    "scatter_nd": (node("ScatterND", ["x", "i", "b"]), [("x", [1000, 768]), ("i", [16, 1]), ("b", [16, 768])], []),
    # ops of opsets 18-21
    "groupnorm": (node("GroupNormalization", ["x", "s", "b"], num_groups=32), [("x", [1, 256, 64, 64])],
                  [floats(np.ones(256), "s"), floats(np.zeros(256), "b")]),
    "mish": (node("Mish", ["x"]), [("x", [1, 128, 80, 80])], []),
    "lpnorm": (node("LpNormalization", ["x"], axis=-1, p=2), [("x", [128, 384])], []),
    "resize_aa": (node("Resize", ["x", "", "sc"], mode="linear", antialias=1), [("x", [1, 3, 448, 448])],
                  [floats([1, 1, 0.5, 0.5], "sc")]),
    "nms": (node("NonMaxSuppression", ["x", "b", "m", "iou", "th"]), [("x", [1, 8400, 4]), ("b", [1, 80, 8400])],
            [ints([100], "m"), floats([0.5], "iou"), floats([0.25], "th")]),
}

# Models of ops (or op forms) newer than opset 17.
OPSETS = {"gelu_op": 20, "groupnorm": 21, "mish": 18, "resize_aa": 18}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (n, inputs, inits) in MODELS.items():
        inits = list(inits)
        if name == "gather_rows":  # an embedding table; int64 token ids
            inits.append(floats(np.random.default_rng(0).standard_normal((30522, 768)), "w"))
        declared = [helper.make_tensor_value_info(
            i, TensorProto.INT64 if name == "gather_rows" or i == "i" else TensorProto.BOOL if i == "c" else TensorProto.FLOAT, s)
            for i, s in inputs]
        if name == "where":
            declared.append(helper.make_tensor_value_info("c", TensorProto.BOOL, [1, 1, 1, 128]))
        out_type = {"argmax": TensorProto.INT64, "argmax_last": TensorProto.INT64, "nms": TensorProto.INT64,
                    "greater": TensorProto.BOOL, "equal_bcast": TensorProto.BOOL,
                    "cast_half": TensorProto.FLOAT16}.get(name, TensorProto.FLOAT)
        outputs = [helper.make_tensor_value_info(o, TensorProto.INT64 if o == "i" else out_type, None) for o in n.output]
        graph = helper.make_graph([n], name, declared, outputs, inits)
        opset = OPSETS.get(name, 17)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10 if opset >= 21 else 9 if opset >= 19 else 8
        onnx.save(model, out / f"{name}.onnx")
        print(out / f"{name}.onnx")


if __name__ == "__main__":
    main()
