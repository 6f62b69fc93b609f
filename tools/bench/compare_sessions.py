"""Concurrent sessions on few cores: Osprey against onnxruntime, interleaved.

For each model and (sessions, threads) pair, rounds alternate A B A B: one
`osprey bench --sessions S --threads T --json` run (its own process) and one onnxruntime run
in this process with S InferenceSessions (intra-op threads T, graph optimizations ALL) driven
from S Python threads (onnxruntime releases the GIL while it runs), each with the same warmup
and timed runs per session, started together. Reports the median over rounds of the total
throughput (inferences/s) and of the p50 over all runs, and Osprey's share of onnxruntime's
throughput. The "1 x 1" row is the baseline: S x T > cores is where a spinning runtime
collapses.

    .venv/bin/python tools/bench/compare_sessions.py --models mobilenetv2 --configs 1x1 1x2 2x1 2x2
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_ort import REPO, pick_case, save_inputs  # noqa: E402


def ort_round(path, feeds, sessions, threads, warmup, iters):
    sess = []
    for _ in range(sessions):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess.append(ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]))
    samples = [[] for _ in range(sessions)]
    barrier = threading.Barrier(sessions + 1)

    def body(i):
        for _ in range(warmup):
            sess[i].run(None, feeds)
        barrier.wait()
        for _ in range(iters):
            t0 = time.perf_counter()
            sess[i].run(None, feeds)
            samples[i].append((time.perf_counter() - t0) * 1e3)

    workers = [threading.Thread(target=body, args=(i,)) for i in range(sessions)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - start
    flat = [s for per in samples for s in per]
    return len(flat) / wall, statistics.median(flat)


def osprey_round(osprey, path, inputs, sessions, threads, warmup, iters):
    cmd = [str(osprey), "bench", str(path), "--json", "--threads", str(threads),
           "--warmup", str(warmup), "--iterations", str(iters)] + inputs
    if sessions > 1:
        cmd += ["--sessions", str(sessions)]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return out["throughput_per_s"], out["p50_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["mobilenetv2"])
    ap.add_argument("--configs", nargs="+", default=["1x1", "1x2", "2x1", "2x2"],
                    help="SESSIONSxTHREADS pairs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--osprey", default=str(REPO / "build" / "cli" / "osprey"))
    ap.add_argument("--zoo", default=str(REPO / "models"))
    args = ap.parse_args()
    configs = []
    for c in args.configs:
        s, t = c.lower().split("x")
        configs.append((int(s), int(t)))
    print(f"onnxruntime {ort.__version__}; rounds {args.rounds} x (warmup {args.warmup}, "
          f"{args.iterations} timed runs per session); medians over rounds")
    print("| model | sessions x threads | Osprey inf/s | onnxruntime inf/s | Osprey / ORT throughput "
          "| Osprey p50 ms | onnxruntime p50 ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    tmp = Path(tempfile.mkdtemp())
    for model in args.models:
        path = Path(args.zoo) / f"{model}.onnx"
        _, feeds = pick_case(model)
        inputs = save_inputs(tmp, model, feeds)
        for sessions, threads in configs:
            a, b = [], []
            for _ in range(args.rounds):
                a.append(osprey_round(args.osprey, path, inputs, sessions, threads, args.warmup,
                                      args.iterations))
                b.append(ort_round(path, feeds, sessions, threads, args.warmup, args.iterations))
            ta, tb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
            pa, pb = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
            print(f"| {model} | {sessions} x {threads} | {ta:.1f} | {tb:.1f} | {ta / tb:.2f}x "
                  f"| {pa:.2f} | {pb:.2f} |", flush=True)


if __name__ == "__main__":
    main()
