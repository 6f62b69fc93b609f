"""OpenVINO peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

The ONNX file goes through openvino.convert_model, is reshaped to the requested input
shapes, saved as IR in work_dir (model.xml/.bin, for inspection) and compiled for CPU with:
PERFORMANCE_HINT = LATENCY (option performance_hint: THROUGHPUT), INFERENCE_NUM_THREADS =
threads, NUM_STREAMS = 1 under LATENCY, ENABLE_CPU_PINNING = the load's pin_threads (the
plugin pins its stream threads to cores when true), INFERENCE_PRECISION_HINT = f32 for "fp32" and bf16 for "fast". The
answer reports the values the compiled model actually holds (the plugin may differ from
the hint, e.g. f32 on a CPU without bf16). The timed call is InferRequest.infer with the
input arrays shared (no copy in) and the outputs copied out to numpy, as onnxruntime does.
"""

import adapter_common as common

common.isolate_script_dir()

REPORTED = ("PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS", "ENABLE_CPU_PINNING",
            "INFERENCE_PRECISION_HINT", "EXECUTION_MODE_HINT", "ENABLE_HYPER_THREADING",
            "SCHEDULING_CORE_TYPE")


class OpenVinoAdapter(common.Adapter):
    framework = "openvino"
    pins_threads = True
    pin_threads_note = "ENABLE_CPU_PINNING (hint enable_cpu_pinning) = pin_threads"
    options = {"performance_hint": (("LATENCY", "THROUGHPUT"), "LATENCY")}

    def probe(self):
        try:
            import openvino
        except ImportError as e:
            return None, f"pip package openvino not installed ({e})"
        return openvino.get_version().split("-")[0], None

    def load_model(self, request):
        import openvino as ov
        import openvino.properties as props
        import openvino.properties.hint as hints

        model = ov.convert_model(str(request.model))
        names = {i.get_any_name() for i in model.inputs}
        given = {s.name for s in request.inputs}
        if names != given:
            raise common.AdapterError(
                f"load: the model's inputs are {sorted(names)}, the request names {sorted(given)}")
        model.reshape({s.name: s.shape for s in request.inputs})
        ir = request.work_dir / "model.xml"
        ov.save_model(model, str(ir), compress_to_fp16=False)

        mode = request.options["performance_hint"]
        config = {
            hints.performance_mode: getattr(hints.PerformanceMode, mode),
            props.inference_num_threads: request.threads,
            hints.enable_cpu_pinning: request.pin_threads,
            hints.inference_precision: ov.Type.bf16 if request.precision == "fast" else ov.Type.f32,
        }
        if mode == "LATENCY":
            config[props.num_streams] = 1
        compiled = ov.Core().compile_model(model, "CPU", config)
        self.infer_request = compiled.create_infer_request()
        self.output_names = [o.get_any_name() for o in compiled.outputs]

        settings = {key: _plain(compiled.get_property(key)) for key in REPORTED}
        settings["device"] = "CPU"
        settings["timed_call"] = "InferRequest.infer(feeds, share_inputs=True, share_outputs=False)"
        used = {"f32": "fp32", "f16": "fp16"}.get(settings["INFERENCE_PRECISION_HINT"],
                                                 settings["INFERENCE_PRECISION_HINT"])
        if settings["ENABLE_CPU_PINNING"] != request.pin_threads:
            raise common.AdapterError(
                f"asked for ENABLE_CPU_PINNING={request.pin_threads}, the CPU plugin holds "
                f"{settings['ENABLE_CPU_PINNING']}: the cell would not run as labelled")
        notes = f"converted with openvino.convert_model; IR saved as {ir}"
        if request.precision == "fast" and used != "bf16":
            notes += f"; asked for bf16, the CPU plugin chose {used}"
        return {"settings": settings, "precision_used": used, "notes": notes}

    def make_call(self, feeds):
        infer = self.infer_request.infer
        return lambda: infer(feeds, share_inputs=True, share_outputs=False)

    def outputs(self, feeds):
        result = self.infer_request.infer(feeds, share_inputs=False, share_outputs=False)
        return {name: result[i] for i, name in enumerate(self.output_names)}


def _plain(value):
    """Property values as JSON: numbers and booleans stay, the rest by name."""
    if isinstance(value, (bool, int, float, str)):
        return value
    text = str(value)
    if text.startswith("<Type: "):  # ov.Type prints its full name; report the short one
        text = value.to_string()
    return text.split(".")[-1]


if __name__ == "__main__":
    common.serve(OpenVinoAdapter())
