"""Interleaved latency comparison of Osprey and onnxruntime on the zoo (a first, minimal
form of the fair-benchmark protocol; `osprey bench` grows into the full tool).

For each model and thread count, rounds alternate A B A B: one `osprey bench --json` run
(own process, same seeded inputs from tools/zoo/sample_inputs.py saved as .npy) and one
onnxruntime run in this process (graph optimizations ALL, intra-op threads = N), each with
the same warmup and iteration count. Reports the median over rounds of each side's p50 and
the ratio Osprey / onnxruntime, and the median and range of the per-round ratios (each pairs
two runs made back to back, so it cancels drift in the machine's speed better than the ratio
of medians does on a noisy machine). Batch 1, or `--batch N`: the case's item repeated N times
along the first dimension (the ratio of p50s is then the inverse of the throughput ratio: below
1.0x, Osprey serves more items per second). `--precision fast` runs Osprey in its bf16 fast mode
(onnxruntime stays float32: the issue's fast-mode target is a ratio to ORT's float32 p50).

`--peer openvino` pairs Osprey with OpenVINO's CPU plugin instead, at the same precision
(PERFORMANCE_HINT LATENCY, one stream, INFERENCE_NUM_THREADS = N, INFERENCE_PRECISION_HINT f32
for exact and bf16 for fast, as `osprey bench`'s openvino peer sets them; the precision the
plugin holds is printed).

    .venv/bin/python tools/bench/compare_ort.py --models mobilenetv2 resnet50 --threads 1 2
    .venv/bin/python tools/bench/compare_ort.py --peer openvino --precision fast --models resnet50
    .venv/bin/python tools/bench/compare_ort.py --batch 8 --threads 1 --models resnet50
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "zoo"))
import sample_inputs  # noqa: E402

# Batch-1 inputs per model: the zoo's first sample case, but sequence length 128 for encoders.
SEQ128 = {m: ("b1_s128", lambda m=m: sample_inputs.random_tokens(m, 1, 128)) for m in ("bert_base", "minilm")}


def save_inputs(tmp, model, feeds):
    """Saves each feed as tmp/<model>_<i>.npy; returns the matching `osprey --input` arguments."""
    args = []
    for i, (name, value) in enumerate(feeds.items()):
        f = tmp / f"{model}_{i}.npy"
        np.save(f, value)
        args += ["--input", f"{name}={f}"]
    return args


def declared_inputs(path):
    """Seeded feeds in the model's declared input shapes (every dim fixed), for a model outside
    the zoo's cases (e.g. tools/bench/rnn_models.py's): float32 N(0, 1), int64 ids in [0, 1000)
    (in range for an embedding table or a gather's axis of that size), bool coin flips."""
    rng = np.random.default_rng(0)
    feeds = {}
    makers = {"tensor(float)": lambda s: rng.standard_normal(s).astype(np.float32),
              "tensor(int64)": lambda s: rng.integers(0, 1000, s, dtype=np.int64),
              "tensor(bool)": lambda s: rng.integers(0, 2, s).astype(bool)}
    for i in ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_inputs():
        if i.type not in makers or not all(isinstance(d, int) for d in i.shape):
            sys.exit(f"{path}: input {i.name} is {i.type} {i.shape}; only fixed float32, int64 and bool inputs "
                     "can be made up")
        feeds[i.name] = makers[i.type](i.shape)
    return "declared", feeds


def ms(v):
    """A p50 in ms with three significant digits down to 0.001 (a 0.1 ms model reads 0.105)."""
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def pick_case(model, path=None):
    # A quantized copy (the zoo's NAME_int8, or one made by tools/zoo/quantize.py into --zoo)
    # takes its float model's inputs; a model the zoo has no cases for, its declared inputs.
    base = model.removesuffix("_int8")
    if path is not None and model not in sample_inputs.CASES and base not in sample_inputs.CASES and base not in SEQ128:
        return declared_inputs(path)
    if base in SEQ128:
        name, make = SEQ128[base]
        return name, make()
    key = model if model in sample_inputs.CASES else base
    name, make = next(iter(sample_inputs.CASES[key].items()))
    return name, make()


def timed_p50(call, warmup, iters):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# Each peer returns its p50 and a note on what it ran ("" when nothing to say).
def ort_session(path, threads, profile_prefix=None):
    """onnxruntime as the comparisons run it: graph optimizations ALL, N intra-op threads; with
    profiling on when profile_prefix is given."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = str(profile_prefix)
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def ort_p50(path, feeds, threads, warmup, iters, precision):
    sess = ort_session(path, threads)
    return timed_p50(lambda: sess.run(None, feeds), warmup, iters), ""


def openvino_compiled(path, feeds, threads, precision, profiling=False):
    """OpenVINO's CPU plugin as the comparisons run it: the inputs' shapes, LATENCY hint, one
    stream, N threads, bf16 for fast and f32 for exact; per-node profiling when asked."""
    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints

    model = ov.convert_model(str(path))
    model.reshape({k: list(v.shape) for k, v in feeds.items()})
    config = {
        hints.performance_mode: hints.PerformanceMode.LATENCY,
        props.num_streams: 1,
        props.inference_num_threads: threads,
        hints.inference_precision: ov.Type.bf16 if precision == "fast" else ov.Type.f32,
    }
    if profiling:
        config[props.enable_profiling] = True
    return ov.Core().compile_model(model, "CPU", config)


def openvino_p50(path, feeds, threads, warmup, iters, precision):
    compiled = openvino_compiled(path, feeds, threads, precision)
    held = compiled.get_property("INFERENCE_PRECISION_HINT")
    held = held.get_type_name() if hasattr(held, "get_type_name") else str(held)
    request = compiled.create_infer_request()
    p50 = timed_p50(lambda: request.infer(feeds, share_inputs=True, share_outputs=False), warmup, iters)
    return p50, f"openvino held INFERENCE_PRECISION_HINT = {held}"


PEERS = {"onnxruntime": ort_p50, "openvino": openvino_p50}


def osprey_p50(osprey, path, inputs, threads, warmup, iters, precision, extra=()):
    cmd = [str(osprey), "bench", str(path), "--json", "--threads", str(threads),
           "--precision", "fast" if precision == "fast" else "fp32",
           "--warmup", str(warmup), "--iterations", str(iters)] + inputs + list(extra)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["p50_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["mobilenetv2", "resnet50", "efficientnet_lite0", "minilm"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--osprey", default=str(REPO / "build" / "cli" / "osprey"))
    ap.add_argument("--zoo", default=str(REPO / "models"))
    ap.add_argument("--precision", choices=["exact", "fast"], default="exact",
                    help="Osprey's precision mode (onnxruntime always runs float32; openvino "
                         "runs the same precision)")
    ap.add_argument("--peer", choices=sorted(PEERS), default="onnxruntime")
    ap.add_argument("--batch", type=int, default=1,
                    help="items per call: the batch-1 case repeated along the first dimension")
    ap.add_argument("--osprey-arg", action="append", default=[],
                    help="one more `osprey bench` argument (repeatable), e.g. --osprey-arg=--blocked-layout=off")
    args = ap.parse_args()
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    extra = f" {' '.join(args.osprey_arg)}" if args.osprey_arg else ""
    if args.peer == "openvino":
        import openvino as ov
        peer_version = f"openvino {ov.get_version().split('-')[0]}"
    else:
        peer_version = f"onnxruntime {ort.__version__}"
    print(f"{peer_version}; rounds {args.rounds} x (warmup {args.warmup}, "
          f"iterations {args.iterations}); Osprey precision {args.precision}{extra}; medians of per-round p50, ms")
    print(f"| model | case | threads | Osprey p50 | {args.peer} p50 | ratio | per-round ratio, median [min-max] |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    tmp = Path(tempfile.mkdtemp())
    for model in args.models:
        path = Path(args.zoo) / f"{model}.onnx"
        case, feeds = pick_case(model, path)
        if args.batch > 1:
            if any(v.ndim == 0 or v.shape[0] != 1 for v in feeds.values()):
                sys.exit(f"--batch: {model}'s case {case} is not batch 1")
            feeds = {k: np.concatenate([v] * args.batch, axis=0) for k, v in feeds.items()}
            case = f"{case} x{args.batch}"
        inputs = save_inputs(tmp, model, feeds)
        for threads in args.threads:
            a, b, notes = [], [], set()
            for _ in range(args.rounds):
                a.append(osprey_p50(args.osprey, path, inputs, threads, args.warmup, args.iterations,
                                    args.precision, args.osprey_arg))
                p50, note = PEERS[args.peer](path, feeds, threads, args.warmup, args.iterations, args.precision)
                b.append(p50)
                notes.add(note)
            ma, mb = statistics.median(a), statistics.median(b)
            ratios = [x / y for x, y in zip(a, b)]
            print(f"| {model} | {case} | {threads} | {ms(ma)} | {ms(mb)} | {ma / mb:.2f}x | "
                  f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}] |", flush=True)
            for note in sorted(n for n in notes if n):
                print(f"({note})", flush=True)


if __name__ == "__main__":
    main()
