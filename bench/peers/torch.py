"""PyTorch peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

Runs the torch module a zoo model was exported from, rebuilt by the zoo's own builder in
tools/zoo/make_zoo.py (same seed, same weights): the model file must be a zoo file
(<name>.onnx with <name> in make_zoo.MODELS; when models/manifest.json lies beside it, its
sha256 must match the manifest). Other models get "no torch source module for this model".

Settings: torch.set_num_threads(threads), one inter-op thread, torch.jit.trace +
torch.jit.optimize_for_inference (= torch.jit.freeze plus conversion to oneDNN layouts;
option jit: freeze | none), calls under torch.inference_mode(). optimize_for_inference is
the default because Debian's torch links the reference BLAS: frozen MobileNetV2 took ~560 ms
a run on one thread, optimized ~50 ms. Precision "fast" traces under CPU autocast to bfloat16 (PyTorch's
CPU mixed precision), offered only on CPUs with avx512_bf16 or amx_bf16. The timed call is
the module call on tensors made from the input arrays beforehand.
"""

import hashlib
import json
import sys
from pathlib import Path

import adapter_common as common

common.isolate_script_dir()

ZOO_TOOLS = Path(__file__).resolve().parents[2] / "tools" / "zoo"


class _Captured(Exception):
    """Stops a zoo builder at its export call, carrying what it would have exported."""

    def __init__(self, module, args, input_names, output_names):
        super().__init__("captured")
        self.module, self.args = module, args
        self.input_names, self.output_names = input_names, output_names


def source_module(model_path, work_dir):
    """(zoo name, torch module, input names, output names) for a zoo model file."""
    sys.path.insert(0, str(ZOO_TOOLS))
    try:
        import make_zoo
    finally:
        sys.path.remove(str(ZOO_TOOLS))
    name = model_path.stem
    spec = make_zoo.MODELS.get(name)
    if spec is None or spec.file != model_path.name:
        raise common.AdapterError(
            f"load: no torch source module for this model ({model_path.name} is not one of the zoo's "
            f"models: {', '.join(sorted(make_zoo.MODELS))})")
    _check_manifest(model_path, name)

    def capture(module, args, path, input_names, output_names, dynamic_axes):
        raise _Captured(module, args, input_names, output_names)

    original = make_zoo._export
    make_zoo._export = capture
    try:
        spec.build(work_dir / f"{name}.unused.onnx")
    except _Captured as c:
        return name, c.module, c.input_names, c.output_names
    finally:
        make_zoo._export = original
    raise common.AdapterError(
        f"load: no torch source module for this model (the zoo's {name} is {spec.source})")


def _check_manifest(model_path, name):
    manifest = model_path.parent / "manifest.json"
    if not manifest.is_file():
        return
    entries = {m["name"]: m for m in json.loads(manifest.read_text())["models"]}
    if name not in entries:
        return
    h = hashlib.sha256()
    with open(model_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != entries[name]["sha256"]:
        raise common.AdapterError(
            f"load: no torch source module for this model ({model_path} differs from the zoo's {name}: "
            f"sha256 {h.hexdigest()[:12]} != manifest {entries[name]['sha256'][:12]})")


class TorchAdapter(common.Adapter):
    framework = "torch"
    pin_threads_note = ("PyTorch has no API to pin its intra-op threads (only the OMP_PROC_BIND / "
                        "GOMP_CPU_AFFINITY environment, read once at start, not per model)")
    options = {"jit": (("optimize_for_inference", "freeze", "none"), "optimize_for_inference")}
    interop_set = False

    def probe(self):
        try:
            import torch
        except ImportError as e:
            return None, f"Debian package python3-torch not installed ({e})"
        return torch.__version__, None

    def load_model(self, request):
        import torch

        if request.precision == "fast" and not common.cpu_flags() & {"avx512_bf16", "amx_bf16"}:
            raise common.AdapterError(
                "precision fast not available: this CPU has neither avx512_bf16 nor amx_bf16, so "
                "torch's CPU bfloat16 autocast would be emulated")
        torch.set_num_threads(request.threads)
        if not self.interop_set:  # settable once per process; a second call aborts it
            torch.set_num_interop_threads(1)
            self.interop_set = True
        name, module, input_names, output_names = source_module(request.model, request.work_dir)
        given = [s.name for s in request.inputs]
        if sorted(given) != sorted(input_names):
            raise common.AdapterError(f"load: the model's inputs are {input_names}, the request names {given}")
        self.input_names, self.output_names = input_names, output_names
        module.eval()
        example = tuple(torch.zeros(s.shape, dtype=getattr(torch, s.dtype)) for s in self._ordered(request))
        jit = request.options["jit"]
        self.autocast = request.precision == "fast"
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.autocast):
            if jit != "none":
                module = torch.jit.trace(module, example, check_trace=False)
                module = torch.jit.freeze(module) if jit == "freeze" else torch.jit.optimize_for_inference(module)
        self.module = module
        settings = {
            "torch_num_threads": torch.get_num_threads(),
            "torch_num_interop_threads": torch.get_num_interop_threads(),
            "jit": {"freeze": "torch.jit.trace + torch.jit.freeze",
                    "optimize_for_inference": "torch.jit.trace + torch.jit.optimize_for_inference",
                    "none": "eager"}[jit],
            "grad_mode": "torch.inference_mode()",
            "autocast": "cpu bfloat16" if self.autocast else "off",
            "timed_call": "module(*tensors) under torch.inference_mode()",
        }
        return {"settings": settings, "precision_used": "bf16-autocast" if self.autocast else "fp32",
                "notes": f"the zoo's {name} torch module, rebuilt by tools/zoo/make_zoo.py"}

    def _ordered(self, request):
        by_name = {s.name: s for s in request.inputs}
        return [by_name[n] for n in self.input_names]

    def _tensors(self, feeds):
        import torch

        return tuple(torch.from_numpy(feeds[n]) for n in self.input_names)

    def make_call(self, feeds):
        import torch

        module, args, autocast = self.module, self._tensors(feeds), self.autocast

        def call():
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                return module(*args)
        return call

    def outputs(self, feeds):
        result = self.make_call(feeds)()
        if not isinstance(result, (tuple, list)):
            result = (result,)
        return {n: t.float().numpy() for n, t in zip(self.output_names, result)}


if __name__ == "__main__":
    common.serve(TorchAdapter())
