"""MNN peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

The ONNX file is converted by MNN's converter from the mnn wheel into work_dir/model.mnn.
The converter is called through the wheel's native module (_tools.mnnconvert) in a child
process, not through the `mnnconvert` script: that script's logger tries to pip-install a
telemetry package and send usage reports, which a benchmark must not do. When the
converter rejects an op, its message (naming the op) becomes the load error.

Settings: Interpreter + Session on the CPU backend, numThread = threads, precision "high"
(fp32) for "fp32". Precision "fast" maps to MNN's "low" on ARM (fp16); on x86 it is
refused: this wheel's x86 CPU backend computes "low" in fp32 (MobileNetV2's outputs were
bit-identical). Inputs are resized to the requested shapes. The timed call copies the
inputs into the session (from host tensors made beforehand) and runs the session.
"""

import platform
import sys

import adapter_common as common

common.isolate_script_dir()

CONVERT = "import sys, _tools; _tools.mnnconvert(sys.argv)"


def _unsupported_ops(log):
    """Lines of MNN converter output that name ops it cannot convert."""
    keys = ("not support", "unsupported", "Not Support", "Don't support", "UNSUPPORT")
    return [line.strip() for line in log.splitlines() if any(k in line for k in keys)]


class MnnAdapter(common.Adapter):
    framework = "mnn"
    pin_threads_note = ("the MNN Python API this adapter uses (Interpreter + Session, "
                        "numThread) has no per-thread CPU pinning setting")

    def probe(self):
        try:
            import MNN
        except ImportError as e:
            return None, f"pip package mnn not installed ({e})"
        return MNN.version(), None

    def load_model(self, request):
        import MNN

        if request.precision == "fast" and platform.machine() in ("x86_64", "AMD64"):
            raise common.AdapterError(
                "precision fast not available: MNN's x86 CPU backend computes precision 'low' in fp32")
        work = request.work_dir
        key = common.conversion_key(request, converter="MNNConvert")
        notes = "converted with MNN's converter (_tools.mnnconvert from the mnn wheel)"
        if common.converted(work, key, ["model.mnn"]):
            notes += " (reused the conversion already in work_dir)"
        else:
            (work / "model.mnn").unlink(missing_ok=True)
            argv = [sys.executable, "-c", CONVERT, "-f", "ONNX", "--modelFile", str(request.model),
                    "--MNNModel", "model.mnn", "--bizCode", "osprey"]
            try:
                log = common.run_converter(argv, work, "MNN converter (ONNX -> MNN)", "mnnconvert.log")
            except common.AdapterError as e:
                ops = _unsupported_ops((work / "mnnconvert.log").read_text())
                raise common.AdapterError(f"{e}; {' / '.join(ops)}" if ops else str(e)) from None
            ops = _unsupported_ops(log)
            if ops or not (work / "model.mnn").is_file():
                raise common.AdapterError(
                    "load: unsupported op(s) for MNN: " + (" / ".join(ops) or "the converter wrote no model"))
            common.mark_converted(work, key)

        precision = "low" if request.precision == "fast" else "high"
        config = {"backend": "CPU", "numThread": request.threads, "precision": precision}
        interpreter = MNN.Interpreter(str(work / "model.mnn"))
        session = interpreter.createSession(config)
        inputs = interpreter.getSessionInputAll(session)
        given = {s.name: s for s in request.inputs}
        if set(inputs) != set(given):
            raise common.AdapterError(f"load: the model's inputs are {sorted(inputs)}, the request names {sorted(given)}")
        for name, spec in given.items():
            if spec.dtype not in ("float32", "int32", "int64"):
                raise common.AdapterError(f"load: MNN adapter takes float32/int32/int64 inputs; '{name}' is {spec.dtype}")
            interpreter.resizeTensor(inputs[name], tuple(spec.shape))
        interpreter.resizeSession(session)
        self.interpreter, self.session = interpreter, session
        self.session_inputs = inputs
        outputs = interpreter.getSessionOutputAll(session)
        onnx_order = [name for name, _ in common.onnx_signature(request.model)[1]]
        self.output_names = [n for n in onnx_order if n in outputs] + sorted(set(outputs) - set(onnx_order))
        settings = {"backend": "CPU", "numThread": request.threads, "precision": precision,
                    "api": "Interpreter/Session", "timed_call": "Tensor.copyFrom(inputs) + runSession"}
        used = "fp16 (MNN precision low)" if precision == "low" else "fp32"
        return {"settings": settings, "precision_used": used, "notes": notes}

    def _host_tensors(self, feeds):
        import MNN
        import numpy as np

        tensors = []
        for name, array in feeds.items():
            if array.dtype == np.float32:
                host = MNN.Tensor(array.shape, MNN.Halide_Type_Float, array, MNN.Tensor_DimensionType_Caffe)
            else:  # MNN keeps integer tensors as int32
                host = MNN.Tensor(array.shape, MNN.Halide_Type_Int, array.astype(np.int32),
                                  MNN.Tensor_DimensionType_Caffe)
            tensors.append((self.session_inputs[name], host))
        return tensors

    def make_call(self, feeds):
        pairs, run, session = self._host_tensors(feeds), self.interpreter.runSession, self.session

        def call():
            for device, host in pairs:
                device.copyFrom(host)
            run(session)
        return call

    def outputs(self, feeds):
        import MNN

        self.make_call(feeds)()
        result = {}
        for name in self.output_names:
            out = self.interpreter.getSessionOutput(self.session, name)
            host = MNN.Tensor(out, MNN.Tensor_DimensionType_Caffe)
            out.copyToHostTensor(host)
            result[name] = host.getNumpyData().copy()
        return result


if __name__ == "__main__":
    common.serve(MnnAdapter())
