"""ncnn peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

The ONNX file is converted offline by pnnx (PyPI package pnnx) into work_dir as
model.ncnn.param/.bin, with the requested input shapes (inputshape=...) and fp32 weights
(fp16=0) for precision "fp32", fp16 weights for "fast". Layers pnnx leaves in the param
file that ncnn has no implementation of are reported by name as unsupported ops.

Settings: Option.num_threads = threads, packing layout on, lightmode on, for "fp32" every
fp16/bf16 storage and arithmetic switch off; "fast" keeps ncnn's defaults (fp16 packed,
storage and arithmetic where the CPU has them). ncnn blobs have no batch axis, so every
input's first dimension must be 1. pnnx names blobs in0.. and out0.., in the ONNX graph's
input and output order. The timed call is one Extractor: create, input every Mat (made
from the arrays beforehand), extract every output.
"""

import re

import adapter_common as common

common.isolate_script_dir()


def _pnnx_binary():
    """The converter executable inside the pnnx wheel (found without importing pnnx, whose
    Python part imports torch), or None."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(spec.submodule_search_locations[0]) / "pnnx"
    return binary if binary.is_file() else None


def _ops_pnnx_rejected(log):
    """Op types pnnx's output names as ones it could not handle."""
    found = re.findall(r"unexpected op_type (\S+)", log)
    found += re.findall(r"(?:[\w.]+:)?(\w+)\(-?\d+\) is not a registered function/op", log)
    return sorted(set(found))


def unsupported_layers(param_path):
    """Layer types in an ncnn .param that this ncnn build cannot create."""
    import ncnn

    lines = param_path.read_text().splitlines()[2:]  # magic, then layer/blob counts
    types = {line.split()[0] for line in lines if line.strip()}
    return sorted(t for t in types if ncnn.layer_to_index(t) < 0)


def _fit_shape(array, dims, batch, name):
    """Gives an extracted ncnn blob (no batch axis) the ONNX output's shape."""
    want = [batch if (i == 0 and d is None) else d for i, d in enumerate(dims)]
    if want.count(None) > 1:
        raise common.AdapterError(f"output '{name}' has more than one dynamic dimension besides batch")
    want = [-1 if d is None else d for d in want]
    try:
        return array.reshape(want) if want else array.reshape(())
    except ValueError:
        raise common.AdapterError(
            f"ncnn output '{name}' has shape {list(array.shape)}, the ONNX model declares {dims}") from None


class NcnnAdapter(common.Adapter):
    framework = "ncnn"
    pin_threads_note = ("ncnn's Python API only binds all threads to a group of cores "
                        "(set_cpu_powersave: all / little / big), not each thread to a CPU")

    def probe(self):
        try:
            import ncnn
        except ImportError as e:
            return None, f"pip package ncnn not installed ({e})"
        if _pnnx_binary() is None:
            return ncnn.__version__, "pip package pnnx (ONNX -> ncnn converter) not installed"
        return ncnn.__version__, None

    def load_model(self, request):
        import ncnn

        input_names, outputs = common.onnx_signature(request.model)
        given = {s.name: s for s in request.inputs}
        if set(input_names) != set(given):
            raise common.AdapterError(f"load: the model's inputs are {input_names}, the request names {sorted(given)}")
        for s in request.inputs:
            if s.dtype != "float32":
                raise common.AdapterError(f"load: ncnn takes float32 blobs; input '{s.name}' is {s.dtype}")
            if not 2 <= len(s.shape) <= 5 or s.shape[0] != 1:
                raise common.AdapterError(
                    f"load: ncnn blobs have no batch axis and up to 4 dims: input '{s.name}' must be "
                    f"[1, ...] with 2 to 5 dims, got {s.shape}")
        fp16 = request.precision == "fast"
        work = request.work_dir
        files = ("model.ncnn.param", "model.ncnn.bin")
        key = common.conversion_key(request, converter="pnnx", fp16=fp16)
        notes = "converted with pnnx"
        if common.converted(work, key, files):
            notes += " (reused the conversion already in work_dir)"
        else:
            shapes = ",".join(f"[{','.join(map(str, given[n].shape))}]f32"
                              for n in input_names)
            out = {"pnnxparam": "model.pnnx.param", "pnnxbin": "model.pnnx.bin", "pnnxpy": "model_pnnx.py",
                   "pnnxonnx": "model.pnnx.onnx", "ncnnparam": files[0], "ncnnbin": files[1],
                   "ncnnpy": "model_ncnn.py"}
            argv = [str(_pnnx_binary()), str(request.model), f"inputshape={shapes}",
                    f"fp16={int(fp16)}"] + [f"{k}={v}" for k, v in out.items()]
            try:
                common.run_converter(argv, work, "pnnx (ONNX -> ncnn)", "pnnx.log")
            except common.AdapterError as e:
                ops = _ops_pnnx_rejected((work / "pnnx.log").read_text() if (work / "pnnx.log").is_file() else "")
                if ops:
                    raise common.AdapterError(
                        f"load: unsupported op(s) for ncnn: {', '.join(ops)} (pnnx could not convert them)") from e
                raise
            if not (work / files[0]).is_file():
                raise common.AdapterError("load: pnnx wrote no ncnn model (see pnnx.log in work_dir)")
            common.mark_converted(work, key)
        missing = unsupported_layers(work / files[0])
        if missing:
            raise common.AdapterError(
                f"load: unsupported op(s) for ncnn: {', '.join(missing)} (pnnx left them unconverted)")

        net = ncnn.Net()
        opt = net.opt
        opt.num_threads = request.threads
        opt.lightmode = True
        opt.use_packing_layout = True
        if not fp16:
            opt.use_fp16_packed = opt.use_fp16_storage = opt.use_fp16_arithmetic = False
            opt.use_bf16_storage = opt.use_bf16_packed = False
        if net.load_param(str(work / files[0])) != 0 or net.load_model(str(work / files[1])) != 0:
            raise common.AdapterError(f"load: ncnn could not load {work / files[0]} (see stderr)")
        self.net = net
        self.blobs_in = [(f"in{i}", n) for i, n in enumerate(input_names)]
        self.blobs_out = [(f"out{i}", n, dims) for i, (n, dims) in enumerate(outputs)]
        known = set(net.output_names()) | set(net.input_names())
        absent = [b for b, _ in self.blobs_in if b not in known] + [b for b, _, _ in self.blobs_out if b not in known]
        if absent:
            raise common.AdapterError(f"load: the ncnn model lacks blobs {absent} that pnnx names inputs/outputs")
        self.batch = request.batch
        settings = {
            "num_threads": opt.num_threads,
            "lightmode": opt.lightmode,
            "use_packing_layout": opt.use_packing_layout,
            "use_fp16_packed": opt.use_fp16_packed,
            "use_fp16_storage": opt.use_fp16_storage,
            "use_fp16_arithmetic": opt.use_fp16_arithmetic,
            "use_bf16_storage": opt.use_bf16_storage,
            "openmp_blocktime": opt.openmp_blocktime,
            "pnnx_fp16_weights": fp16,
            "timed_call": "create_extractor + input all + extract all",
        }
        precision = "fp16 storage/arithmetic (ncnn defaults)" if fp16 else "fp32"
        return {"settings": settings, "precision_used": precision, "notes": notes}

    def _mats(self, feeds):
        import ncnn

        return [(blob, ncnn.Mat(feeds[name][0])) for blob, name in self.blobs_in]

    def make_call(self, feeds):
        net, mats, outs = self.net, self._mats(feeds), [b for b, _, _ in self.blobs_out]

        def call():
            ex = net.create_extractor()
            for blob, mat in mats:
                ex.input(blob, mat)
            results = [ex.extract(blob) for blob in outs]
            if any(ret != 0 for ret, _ in results):
                raise RuntimeError("ncnn extract failed")
            return results
        return call

    def outputs(self, feeds):
        import numpy as np

        results = self.make_call(feeds)()
        return {name: _fit_shape(np.array(mat), dims, self.batch, name)
                for (_, name, dims), (_, mat) in zip(self.blobs_out, results)}


if __name__ == "__main__":
    common.serve(NcnnAdapter())
