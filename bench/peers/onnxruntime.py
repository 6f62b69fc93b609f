"""onnxruntime peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

    .venv/bin/python bench/peers/onnxruntime.py   # then JSON lines on stdin

Settings: CPU execution provider, graph optimization ORT_ENABLE_ALL, intra-op threads =
the requested thread count, one inter-op thread, sequential execution. The timed call is
InferenceSession.run (inputs are numpy arrays already in memory, outputs come back as
numpy arrays). Pinning (pin_threads): the session config entry
session.intra_op_thread_affinities gets one CPU per intra-op worker thread (threads 1..n-1;
onnxruntime never pins the calling thread), chosen by Osprey's rule (adapter_common.worker_cpus)
and written 1-based as onnxruntime requires; unpinned, the entry is not set. onnxruntime's CPU provider has no reduced-precision mode for fp32 models on
x86, so precision "fast" is refused with that reason.
"""

import adapter_common as common

common.isolate_script_dir()


class OnnxRuntimeAdapter(common.Adapter):
    framework = "onnxruntime"
    pins_threads = True
    pin_threads_note = ("session config entry session.intra_op_thread_affinities: one CPU per "
                        "intra-op worker thread (the calling thread is not pinned)")

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
        affinities = intra_op_affinities(request.threads) if request.pin_threads else None
        if affinities:
            so.add_session_config_entry("session.intra_op_thread_affinities", affinities)
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
                "pin_threads": request.pin_threads,
                "intra_op_thread_affinities": affinities if affinities else "not set",
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


def intra_op_affinities(threads):
    """session.intra_op_thread_affinities for `threads` intra-op threads: one 1-based logical
    processor id per worker thread, ';' between threads ("2;1" puts worker 1 on CPU 1 and
    worker 2 on CPU 0). None for one thread: there is no worker to pin."""
    cpus = common.worker_cpus(threads)
    return ";".join(str(c + 1) for c in cpus) if cpus else None


if __name__ == "__main__":
    common.serve(OnnxRuntimeAdapter())
