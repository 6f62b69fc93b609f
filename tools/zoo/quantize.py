#!/usr/bin/env python3
"""Quantizes an image model to int8 in the QDQ format with onnxruntime's quantize_static, as
the zoo's int8 models are made (per-channel int8 weights, uint8 activations, MinMax
calibration on the four sample photographs at 224 and cropped from 256, and four noise
images), then drops the initializers no node reads any more (the Clip bounds the quantizer
folds into the quantization), so that onnxruntime does not warn about them.

    .venv/bin/python tools/zoo/quantize.py models/mobilenetv2.onnx /tmp/mobilenetv2_int8.onnx

With --qoperator the same calibration writes the QOperator format (QLinearConv, com.microsoft
QLinearAdd / QLinearGlobalAveragePool / QGemm). With --dynamic it quantizes a transformer as
onnxruntime's quantize_dynamic does (int8 weights, activations quantized at run time; no
calibration; a CNN's convolutions become ConvInteger):

    .venv/bin/python tools/zoo/quantize.py --dynamic models/bert_base.onnx /tmp/bert_base_int8.onnx
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sample_inputs  # noqa: E402


def calibration_images():
    batches = [img[None] for img in sample_inputs.photo_batch()[1]]
    batches += [img[None] for img in sample_inputs.photo_batch(size=256)[1][:, :, 16:240, 16:240]]
    batches += [sample_inputs.normal_images(("int8-calibration", i), 1) for i in range(4)]
    return [np.ascontiguousarray(b, dtype=np.float32) for b in batches]


def drop_unused_initializers(path):
    import onnx

    m = onnx.load(str(path))
    used = {i for n in m.graph.node for i in n.input} | {o.name for o in m.graph.output}
    keep = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    onnx.save(m, str(path))


def quantize_qdq(source, dest, input_name="input", operator_format=False):
    """Static quantization in the QDQ format, or with operator_format in the QOperator one
    (ONNX's QLinearConv and onnxruntime's com.microsoft QLinearAdd, QLinearGlobalAveragePool
    and QGemm instead of QuantizeLinear / DequantizeLinear pairs around float ops)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    batches = calibration_images()

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {input_name: x}

    quant_format = QuantFormat.QOperator if operator_format else QuantFormat.QDQ
    quantize_static(str(source), str(dest), Reader(), quant_format=quant_format,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    drop_unused_initializers(dest)


def quantize_dynamic_int8(source, dest):
    """Dynamic quantization, as onnxruntime's quantize_dynamic makes it: int8 weights (per
    tensor, symmetric) for every MatMul with constant weights (and every Conv, in a CNN), each
    activation quantized at run time by a DynamicQuantizeLinear, then MatMulInteger (ConvInteger)
    and a float rescale."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(dest), weight_type=QuantType.QInt8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--input", default="input", help="the image input's name (default: input)")
    ap.add_argument("--dynamic", action="store_true",
                    help="dynamic quantization (quantize_dynamic: transformers) instead of QDQ")
    ap.add_argument("--qoperator", action="store_true",
                    help="static quantization in the QOperator format instead of QDQ")
    args = ap.parse_args()
    if args.dynamic:
        quantize_dynamic_int8(args.source, args.dest)
    else:
        quantize_qdq(args.source, args.dest, args.input, operator_format=args.qoperator)
    print(f"wrote {args.dest}")


if __name__ == "__main__":
    main()
