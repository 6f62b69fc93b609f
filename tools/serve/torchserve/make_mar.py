#!/usr/bin/env python3
"""Makes TorchServe's model archive for the zoo's MobileNetV2.

    .venv/bin/python tools/serve/torchserve/make_mar.py --out DIR [--zoo models]

Rebuilds the torch module that models/mobilenetv2.onnx was exported from, through the torch
peer's source_module() (bench/peers/torch.py: the zoo builder tools/zoo/make_zoo.py with its
seed, so the weights are the ONNX file's), traces it on a [1,3,224,224] input
(torch.jit.trace, no freezing: the handler applies torch.jit.optimize_for_inference after
loading, as the torch peer does), saves DIR/mobilenetv2.pt and packs it with
mobilenetv2_handler.py into DIR/mobilenetv2.mar with torch-model-archiver.
"""

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
PEERS = ROOT / "bench" / "peers"
MODEL_NAME = "mobilenetv2"


def load_torch_peer():
    """bench/peers/torch.py under another module name (its own name would shadow torch)."""
    sys.path.insert(0, str(PEERS))
    try:
        spec = importlib.util.spec_from_file_location("osprey_torch_peer", PEERS / "torch.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if str(PEERS) in sys.path:
            sys.path.remove(str(PEERS))
    return module


def trace_module(zoo: Path, out: Path) -> Path:
    import torch

    peer = load_torch_peer()
    with tempfile.TemporaryDirectory() as work:
        name, module, inputs, outputs = peer.source_module(zoo / f"{MODEL_NAME}.onnx", Path(work))
    if inputs != ["input"] or outputs != ["logits"]:
        raise SystemExit(f"error: the zoo's {name} has inputs {inputs} / outputs {outputs}, "
                         "expected ['input'] / ['logits']")
    module.eval()
    with torch.no_grad():
        traced = torch.jit.trace(module, torch.zeros(1, 3, 224, 224), check_trace=False)
    path = out / f"{MODEL_NAME}.pt"
    traced.save(str(path))
    return path


def archive(serialized: Path, out: Path) -> Path:
    archiver = shutil.which("torch-model-archiver") or str(Path(sys.executable).parent / "torch-model-archiver")
    cmd = [archiver, "--model-name", MODEL_NAME, "--version", "1.0",
           "--serialized-file", str(serialized), "--handler", str(HERE / "mobilenetv2_handler.py"),
           "--config-file", str(HERE / "model-config.yaml"), "--export-path", str(out), "--force"]
    subprocess.run(cmd, check=True)
    return out / f"{MODEL_NAME}.mar"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="model store directory to write")
    ap.add_argument("--zoo", type=Path, default=ROOT / "models", help="directory holding mobilenetv2.onnx")
    args = ap.parse_args()
    if not (args.zoo / f"{MODEL_NAME}.onnx").is_file():
        print(f"error: {args.zoo / (MODEL_NAME + '.onnx')} not found: run tools/zoo/make_zoo.py "
              "--only mobilenetv2 first", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    mar = archive(trace_module(args.zoo, args.out), args.out)
    print(f"model archive written to {mar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
