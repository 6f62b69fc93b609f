"""onnxruntime peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

    .venv/bin/python bench/peers/onnxruntime.py   # then JSON lines on stdin

Settings: CPU execution provider, graph optimization ORT_ENABLE_ALL, intra-op threads =
the requested thread count, one inter-op thread, sequential execution. The timed call is
InferenceSession.run (inputs are numpy arrays already in memory, outputs come back as
numpy arrays). onnxruntime's CPU provider has no reduced-precision mode for fp32 models on
x86, so precision "fast" is refused with that reason.
"""

import adapter_common as common

common.isolate_script_dir()


class OnnxRuntimeAdapter(common.Adapter):
    framework = "onnxruntime"

    def probe(self):
        try:
            import onnxruntime
        except ImportError as e:
            return None, f"pip package onnxruntime not installed ({e})"
        return onnxruntime.__version__, None

    def load_model(self, request):
        import onnxruntime as ort

        if request.precision == "fast":
            raise common.AdapterError(
                "precision fast not available: onnxruntime CPU has no bf16 fast mode for fp32 models "
                "(its only documented one, mlas.enable_gemm_fastmath_arm64_bfloat16, is ARM64-only)")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = request.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        session = ort.InferenceSession(str(request.model), so, providers=["CPUExecutionProvider"])
        declared = {i.name for i in session.get_inputs()}
        given = {s.name for s in request.inputs}
        if declared != given:
            raise common.AdapterError(
                f"load: the model's inputs are {sorted(declared)}, the request names {sorted(given)}")
        self.session = session
        self.output_names = [o.name for o in session.get_outputs()]
        return {
            "settings": {
                "execution_provider": "CPUExecutionProvider",
                "graph_optimization_level": "ORT_ENABLE_ALL",
                "intra_op_num_threads": request.threads,
                "inter_op_num_threads": 1,
                "execution_mode": "ORT_SEQUENTIAL",
                "intra_op_allow_spinning": "default (on)",
                "timed_call": "InferenceSession.run(None, feeds)",
            },
            "precision_used": "fp32",
            "notes": "runs the ONNX file directly",
        }

    def make_call(self, feeds):
        session = self.session
        return lambda: session.run(None, feeds)

    def outputs(self, feeds):
        return dict(zip(self.output_names, self.session.run(None, feeds)))


if __name__ == "__main__":
    common.serve(OnnxRuntimeAdapter())
