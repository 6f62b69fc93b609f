#!/usr/bin/env python3
"""Writes a Triton-layout model repository for `osprey serve` demos, tests and benchmarks.

    .venv/bin/python tools/serve/make_demo_repository.py --out DIR [--zoo models]

DIR/
  identity_fp32/  config.pbtxt, 1/model.onnx   tiny Identity over FP32 [-1, 16]: server overhead
  add_sub/        config.pbtxt, 1/model.onnx   INPUT0+INPUT1, INPUT0-INPUT1 over FP32 [-1, 16]
                                               (the model Triton's client examples use)
  text_ops/       config.pbtxt, 1/model.onnx   BYTES in and out: ECHO = TEXT (string [-1, 2]),
                                               NUMBER = float(NUMTEXT) (string [-1, 1]),
                                               batched dynamically
  mobilenetv2/    config.pbtxt, 1/model.onnx   from the zoo (tools/zoo/make_zoo.py), batched
                                               dynamically (preferred 4, 8; 2 ms delay)
  mobilenetv2_image/ config.pbtxt, labels.txt, 1/model.onnx   the same model behind the
                                               server's image stage: clients send JPEG/PNG as
                                               BYTES (resize 256, center crop 224, ImageNet
                                               mean/std, NCHW) and may ask for
                                               "classification": K (softmax, then top-K labels)

labels.txt holds the ImageNet class names from torchvision's installed metadata
(torchvision.models._meta) when torchvision is importable, else "class_0" .. "class_999".

Model files are copied (not linked) so the repository can be moved or edited freely.
"""

import argparse
import shutil
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

OPSET = 17

IDENTITY_CONFIG = """\
name: "identity_fp32"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
"""

ADD_SUB_CONFIG = """\
name: "add_sub"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
dynamic_batching { max_queue_delay_microseconds: 100 }
"""

TEXT_OPS_CONFIG = """\
name: "text_ops"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "TEXT" data_type: TYPE_STRING dims: [ 2 ] },
  { name: "NUMTEXT" data_type: TYPE_STRING dims: [ 1 ] }
]
output [
  { name: "ECHO" data_type: TYPE_STRING dims: [ 2 ] },
  { name: "NUMBER" data_type: TYPE_FP32 dims: [ 1 ] }
]
dynamic_batching { max_queue_delay_microseconds: 500 }
"""

MOBILENET_CONFIG = """\
name: "mobilenetv2"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 1000 ] } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 2000
}
instance_group [ { count: 1 kind: KIND_CPU } ]
"""

MOBILENET_IMAGE_CONFIG = """\
name: "mobilenetv2_image"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "image" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 1000 ] label_filename: "labels.txt" } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "preprocess" value { string_value: "image" } }
parameters { key: "image_input" value { string_value: "input" } }
parameters { key: "resize" value { string_value: "center_crop" } }
parameters { key: "resize_shorter" value { string_value: "256" } }
parameters { key: "size" value { string_value: "224" } }
parameters { key: "scale" value { string_value: "1/255" } }
parameters { key: "mean" value { string_value: "0.485,0.456,0.406" } }
parameters { key: "std" value { string_value: "0.229,0.224,0.225" } }
parameters { key: "layout" value { string_value: "NCHW" } }
parameters { key: "color" value { string_value: "RGB" } }
parameters { key: "classification_softmax" value { string_value: "true" } }
"""


def imagenet_labels() -> list:
    """ImageNet's 1000 class names from torchvision's installed metadata, else class_N."""
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torchvision.models._meta import _IMAGENET_CATEGORIES
        if len(_IMAGENET_CATEGORIES) == 1000:
            return list(_IMAGENET_CATEGORIES)
    except Exception:  # torchvision missing or laid out differently: numbered names
        pass
    return [f"class_{i}" for i in range(1000)]


def _batched(name: str, width: int = 16) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", width])


def identity_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
        "identity_fp32", [_batched("INPUT0")], [_batched("OUTPUT0")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="osprey-demo")


def add_sub_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
         helper.make_node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
        "add_sub", [_batched("INPUT0"), _batched("INPUT1")],
        [_batched("OUTPUT0"), _batched("OUTPUT1")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="osprey-demo")


def text_ops_model() -> onnx.ModelProto:
    def strings(name, width):
        return helper.make_tensor_value_info(name, TensorProto.STRING, ["batch", width])
    graph = helper.make_graph(
        [helper.make_node("Identity", ["TEXT"], ["ECHO"]),
         helper.make_node("Cast", ["NUMTEXT"], ["NUMBER"], to=TensorProto.FLOAT)],
        "text_ops", [strings("TEXT", 2), strings("NUMTEXT", 1)],
        [strings("ECHO", 2), helper.make_tensor_value_info("NUMBER", TensorProto.FLOAT, ["batch", 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="osprey-demo")


def write_model(out: Path, name: str, config: str, model) -> None:
    version_dir = out / name / "1"
    version_dir.mkdir(parents=True, exist_ok=True)
    (out / name / "config.pbtxt").write_text(config)
    target = version_dir / "model.onnx"
    if isinstance(model, Path):
        shutil.copyfile(model, target)
    else:
        onnx.checker.check_model(model)
        onnx.save(model, str(target))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="repository directory to write")
    ap.add_argument("--zoo", type=Path, default=Path(__file__).resolve().parents[2] / "models",
                    help="zoo directory holding mobilenetv2.onnx (default: <repo>/models)")
    ap.add_argument("--skip-zoo", action="store_true", help="only the tiny generated models")
    args = ap.parse_args()
    try:
        main_with(args.out, None if args.skip_zoo else args.zoo)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"repository written to {args.out}")
    return 0


def main_with(out: Path, zoo) -> None:
    """Writes the repository into `out`; MobileNetV2 only when `zoo` is given."""
    out.mkdir(parents=True, exist_ok=True)
    write_model(out, "identity_fp32", IDENTITY_CONFIG, identity_model())
    write_model(out, "add_sub", ADD_SUB_CONFIG, add_sub_model())
    write_model(out, "text_ops", TEXT_OPS_CONFIG, text_ops_model())
    if zoo is not None:
        mobilenet = Path(zoo) / "mobilenetv2.onnx"
        if not mobilenet.is_file():
            raise FileNotFoundError(f"{mobilenet} not found: run tools/zoo/make_zoo.py --only "
                                    "mobilenetv2 first, or pass --skip-zoo")
        write_model(out, "mobilenetv2", MOBILENET_CONFIG, mobilenet)
        write_model(out, "mobilenetv2_image", MOBILENET_IMAGE_CONFIG, mobilenet)
        (out / "mobilenetv2_image" / "labels.txt").write_text("\n".join(imagenet_labels()) + "\n")


if __name__ == "__main__":
    sys.exit(main())
