"""TFLite (LiteRT) peer for `osprey bench` (protocol: bench/peers/adapter_common.py).

TFLite runs its own format only, and no ONNX -> TFLite converter works offline here
(onnx2tf and onnx-tf need TensorFlow, which is not installed). So the peer runs
<model stem>.tflite lying next to the ONNX file; without one, load says so. Tensors are
matched to the ONNX graph's inputs and outputs by name, or by position when the names
differ and the counts agree (notes say which). Only the batch dimension is resized: a
.tflite whose other dims differ (e.g. NHWC against an NCHW request) is refused.

Settings: ai_edge_litert Interpreter, num_threads = threads, the default XNNPACK CPU
delegate. Precision "fast" is refused (LiteRT's Python Interpreter exposes no switch for
reduced-precision float inference). The timed call is set_tensor for every input + invoke.
"""

import adapter_common as common

common.isolate_script_dir()


def _match(onnx_names, details, what):
    """{onnx name: tflite tensor detail}, by name or else by position."""
    by_name = {d["name"]: d for d in details}
    if set(onnx_names) <= set(by_name):
        return {n: by_name[n] for n in onnx_names}, "by name"
    if len(onnx_names) != len(details):
        raise common.AdapterError(
            f"load: the .tflite has {len(details)} {what}s {sorted(by_name)}, the ONNX model "
            f"{len(onnx_names)} {onnx_names}")
    return dict(zip(onnx_names, details)), "by position"


class TfliteAdapter(common.Adapter):
    framework = "tflite"
    pin_threads_note = "the LiteRT Interpreter takes a thread count only, no CPU affinity"

    def probe(self):
        try:
            import ai_edge_litert.interpreter  # noqa: F401
        except ImportError as e:
            return None, f"pip package ai-edge-litert not installed ({e})"
        return common.package_version("ai-edge-litert"), None

    def load_model(self, request):
        from ai_edge_litert.interpreter import Interpreter

        if request.precision == "fast":
            raise common.AdapterError(
                "precision fast not available: LiteRT's Python Interpreter has no reduced-precision "
                "switch for float models")
        path = request.model.with_suffix(".tflite")
        if not path.is_file():
            raise common.AdapterError(
                f"load: no .tflite file next to the model ({path} does not exist) and no offline "
                "ONNX -> TFLite converter is installed (onnx2tf needs TensorFlow)")
        onnx_inputs, onnx_outputs = common.onnx_signature(request.model)
        given = {s.name: s for s in request.inputs}
        if set(onnx_inputs) != set(given):
            raise common.AdapterError(f"load: the model's inputs are {onnx_inputs}, the request names {sorted(given)}")
        interpreter = Interpreter(model_path=str(path), num_threads=request.threads)
        inputs, how_in = _match(onnx_inputs, interpreter.get_input_details(), "input")
        for name, d in inputs.items():
            want, have = given[name].shape, list(d["shape"])
            if len(want) != len(have) or want[1:] != have[1:]:
                raise common.AdapterError(
                    f"load: the .tflite's input {d['name']} is {have}, the request gives {name} {want} "
                    "(only the batch dimension may differ)")
            if d["dtype"].__name__ != given[name].dtype:
                raise common.AdapterError(
                    f"load: the .tflite's input {d['name']} is {d['dtype'].__name__}, the request "
                    f"gives {given[name].dtype}")
            if want != have:
                interpreter.resize_tensor_input(d["index"], want)
        interpreter.allocate_tensors()
        outputs, how_out = _match([n for n, _ in onnx_outputs], interpreter.get_output_details(), "output")
        self.interpreter = interpreter
        self.input_index = {n: d["index"] for n, d in inputs.items()}
        self.output_index = {n: d["index"] for n, d in outputs.items()}
        settings = {"num_threads": request.threads, "delegate": "XNNPACK (LiteRT default for CPU)",
                    "timed_call": "set_tensor(inputs) + invoke()"}
        notes = f"runs {path}; tensors matched to the ONNX model's inputs {how_in}, outputs {how_out}"
        return {"settings": settings, "precision_used": "fp32", "notes": notes}

    def make_call(self, feeds):
        interpreter, pairs = self.interpreter, [(self.input_index[n], a) for n, a in feeds.items()]

        def call():
            for index, array in pairs:
                interpreter.set_tensor(index, array)
            interpreter.invoke()
        return call

    def outputs(self, feeds):
        self.make_call(feeds)()
        return {n: self.interpreter.get_tensor(i).copy() for n, i in self.output_index.items()}


if __name__ == "__main__":
    common.serve(TfliteAdapter())
