"""Writes small recurrent models for benchmarking the LSTM / GRU kernels against onnxruntime
(seeded random weights, fixed shapes; compare_ort.py feeds them their declared inputs):

    lstm_s100   LSTM, 100 steps, batch 1, 256 inputs, 256 hidden units, forward
    gru_s100    GRU (linear_before_reset), the same sizes
    gru0_s100   GRU without linear_before_reset (ONNX's default), the same sizes
    lstm_b8     LSTM, 50 steps, batch 8, 256 / 256, bidirectional
    lstm_s1     LSTM, 1 step, batch 1, 128 / 128 (Silero VAD's decoder cell)

    .venv/bin/python tools/bench/rnn_models.py --out /tmp/rnn
    .venv/bin/python tools/bench/compare_ort.py --zoo /tmp/rnn --models lstm_s100 gru_s100 gru0_s100 \
        lstm_b8 lstm_s1
"""

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODELS = {  # name: (cell, steps, batch, inputs, hidden, directions[, linear_before_reset])
    "lstm_s100": ("LSTM", 100, 1, 256, 256, 1),
    "gru_s100": ("GRU", 100, 1, 256, 256, 1),
    "gru0_s100": ("GRU", 100, 1, 256, 256, 1, 0),
    "lstm_b8": ("LSTM", 50, 8, 256, 256, 2),
    "lstm_s1": ("LSTM", 1, 1, 128, 128, 1),
}


def make(cell, steps, batch, inputs, hidden, dirs, lbr=1):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell]
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    attrs = {"hidden_size": hidden}
    if dirs == 2:
        attrs["direction"] = "bidirectional"
    if cell == "GRU" and lbr:
        attrs["linear_before_reset"] = 1
    outs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    node = helper.make_node(cell, ["X", "W", "R", "B"], outs, **attrs)
    graph = helper.make_graph(
        [node], cell.lower(), [helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, batch, inputs])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
        [weight("W", (dirs, gates * hidden, inputs)), weight("R", (dirs, gates * hidden, hidden)),
         weight("B", (dirs, 2 * gates * hidden))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, spec in MODELS.items():
        onnx.save(make(*spec), out / f"{name}.onnx")
        print(out / f"{name}.onnx")


if __name__ == "__main__":
    main()
