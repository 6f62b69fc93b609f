"""Interleaved latency comparison of Osprey and onnxruntime on the zoo (a first, minimal
form of the fair-benchmark protocol; `osprey bench` grows into the full tool).

For each model and thread count, rounds alternate A B A B: one `osprey bench --json` run
(own process, same seeded inputs from tools/zoo/sample_inputs.py saved as .npy) and one
onnxruntime run in this process (graph optimizations ALL, intra-op threads = N), each with
the same warmup and iteration count. Reports the median over rounds of each side's p50 and
the ratio Osprey / onnxruntime, and the median and range of the per-round ratios (each pairs
two runs made back to back, so it cancels drift in the machine's speed better than the ratio
of medians does on a noisy machine). Batch 1. `--precision fast` runs Osprey in its bf16 fast mode
(onnxruntime stays float32: the issue's fast-mode target is a ratio to ORT's float32 p50).

    .venv/bin/python tools/bench/compare_ort.py --models mobilenetv2 resnet50 --threads 1 2
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


def pick_case(model):
    if model in SEQ128:
        name, make = SEQ128[model]
        return name, make()
    name, make = next(iter(sample_inputs.CASES[model].items()))
    return name, make()


def ort_p50(path, feeds, threads, warmup, iters):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


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
                    help="Osprey's precision mode (onnxruntime always runs float32)")
    ap.add_argument("--osprey-arg", action="append", default=[],
                    help="one more `osprey bench` argument (repeatable), e.g. --osprey-arg=--blocked-layout=off")
    args = ap.parse_args()
    extra = f" {' '.join(args.osprey_arg)}" if args.osprey_arg else ""
    print(f"onnxruntime {ort.__version__}; rounds {args.rounds} x (warmup {args.warmup}, "
          f"iterations {args.iterations}); Osprey precision {args.precision}{extra}; medians of per-round p50, ms")
    print("| model | case | threads | Osprey p50 | onnxruntime p50 | ratio | per-round ratio, median [min-max] |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    tmp = Path(tempfile.mkdtemp())
    for model in args.models:
        path = Path(args.zoo) / f"{model}.onnx"
        case, feeds = pick_case(model)
        inputs = save_inputs(tmp, model, feeds)
        for threads in args.threads:
            a, b = [], []
            for _ in range(args.rounds):
                a.append(osprey_p50(args.osprey, path, inputs, threads, args.warmup, args.iterations,
                                    args.precision, args.osprey_arg))
                b.append(ort_p50(path, feeds, threads, args.warmup, args.iterations))
            ma, mb = statistics.median(a), statistics.median(b)
            ratios = [x / y for x, y in zip(a, b)]
            print(f"| {model} | {case} | {threads} | {ma:.1f} | {mb:.1f} | {ma / mb:.2f}x | "
                  f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}] |", flush=True)


if __name__ == "__main__":
    main()
