"""Where the time goes, Osprey against onnxruntime (or OpenVINO), node by node, interleaved.

For one zoo model and thread count, rounds alternate A B A B: one `osprey bench --json
--profile` run (its own process) and one profiled onnxruntime session in this process (graph
optimizations ALL, intra-op threads = N, profiling on), each with the same inputs (those of
compare_ort.py), warmup and iterations. Reports each side's median p50, the median and range of
the per-round p50 ratios, time per op type on each side, and, where both sides run the same
number of compute nodes (convolutions and products, after each one's own fusions), the two
taken in execution order side by side: median ms per run over the rounds, the ratio, and both
names. `--group REGEX` also sums the pairs by the regex's groups on Osprey's node names (e.g.
the role of EfficientNet's convolutions). Where the counts differ (onnxruntime's Attention
takes the Q/K/V products into itself, for one), only the op-type totals are shown. Both p50s
are taken with the profilers on (Osprey's times each node, onnxruntime's writes events): use
compare_ort.py for the latency figures themselves.

`--peer openvino` profiles OpenVINO's CPU plugin instead (compare_ort.py's settings: LATENCY
hint, one stream, the same threads, f32 (bf16 with `--precision fast`); `enable_profiling` on, each timed run's per-node
real times), pairing its executed Convolution, GroupConvolution, FullyConnected and MatMul
nodes with Osprey's.

    .venv/bin/python tools/bench/profile_vs_ort.py efficientnet_lite0 --threads 1 --rounds 5 \\
        --group '_(expand|depthwise|project)_conv'
    .venv/bin/python tools/bench/profile_vs_ort.py resnet50 --group '(layer\\d)/.*/(conv\\d|downsample)'
    .venv/bin/python tools/bench/profile_vs_ort.py efficientnet_lite0 --peer openvino
"""

import argparse
import collections
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_ort  # noqa: E402

REPO = compare_ort.REPO
# The peers' op types that are a convolution or a product (after their fusions).
OPENVINO_COMPUTE = {"Convolution", "GroupConvolution", "FullyConnected", "MatMul", "Deconvolution"}
ORT_COMPUTE = {"Conv", "FusedConv", "NhwcFusedConv", "Gemm", "FusedGemm", "MatMul", "FusedMatMul",
               "MatMulNBits", "QLinearConv", "MatMulInteger", "DynamicQuantizeMatMul"}


def is_osprey_compute(op_type):
    return op_type.split(".")[-1] in {"Conv", "FusedConv", "Gemm", "MatMul", "FusedMatMul",
                                      "QLinearConv", "MatMulInteger", "MatMulIntegerToFloat"}


def ratio(a, b):
    """a / b to two places, or "-" where the peer timed a node at 0 ms."""
    return f"{a / b:.2f}" if b > 0 else "-"


def osprey_round(args, path, inputs):
    cmd = [args.osprey, "bench", str(path), "--json", "--profile", "--profile-top", "0",
           "--threads", str(args.threads), "--warmup", str(args.warmup),
           "--iterations", str(args.iterations),
           "--precision", "fast" if args.precision == "fast" else "fp32"] + inputs + args.osprey_arg
    d = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    nodes = sorted(d["profile"]["top_nodes"], key=lambda n: n["index"])
    return d["p50_ms"], [(n["name"], n["op_type"], n["ms_per_run"]) for n in nodes]


def ort_round(args, path, feeds, tmp):
    sess = compare_ort.ort_session(path, args.threads, profile_prefix=Path(tmp) / "ort_profile")
    p50 = compare_ort.timed_p50(lambda: sess.run(None, feeds), args.warmup, args.iterations)
    events = json.loads(Path(sess.end_profiling()).read_text())
    # Per node: its durations (the warmup's first, then the timed runs') and first start.
    runs, first, op = collections.defaultdict(list), {}, {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            runs[name].append(e["dur"] / 1e3)
            first.setdefault(name, e["ts"])
            op[name] = e["args"].get("op_name", "?")
    order = sorted(runs, key=lambda n: first[n])
    return p50, [(n, op[n], statistics.median(runs[n][-args.iterations:])) for n in order]


def openvino_round(args, path, feeds, tmp):
    compiled = compare_ort.openvino_compiled(path, feeds, args.threads, args.precision, profiling=True)
    request = compiled.create_infer_request()
    runs, order, op = collections.defaultdict(list), [], {}

    def infer():
        request.infer(feeds, share_inputs=True, share_outputs=False)
        for info in request.profiling_info:
            if str(info.status).endswith("EXECUTED"):
                if info.node_name not in op:
                    order.append(info.node_name)
                    op[info.node_name] = info.node_type
                runs[info.node_name].append(info.real_time.total_seconds() * 1e3)

    p50 = compare_ort.timed_p50(infer, args.warmup, args.iterations)
    return p50, [(n, op[n], statistics.median(runs[n][-args.iterations:])) for n in order]


PEERS = {"onnxruntime": (ort_round, ORT_COMPUTE), "openvino": (openvino_round, OPENVINO_COMPUTE)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a zoo model's name (models/NAME.onnx)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--peer", choices=sorted(PEERS), default="onnxruntime")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--precision", choices=("exact", "fast"), default="exact",
                    help="Osprey's precision mode; OpenVINO runs bf16 for fast, f32 for exact "
                         "(onnxruntime runs float32 either way)")
    ap.add_argument("--group", help="sum the pairs by this regex's groups on Osprey's node names")
    ap.add_argument("--top", type=int, default=0, help="print only the N pairs that lose the most (0: all)")
    ap.add_argument("--osprey", default=str(REPO / "build" / "cli" / "osprey"))
    ap.add_argument("--zoo", default=str(REPO / "models"))
    ap.add_argument("--osprey-arg", action="append", default=[],
                    help="an extra `osprey bench` argument (repeatable), e.g. --osprey-arg=--winograd=off")
    ap.add_argument("--json", dest="json_out", help="also write the figures to this file")
    args = ap.parse_args()
    if args.rounds < 1 or args.iterations < 1 or args.threads < 1:
        ap.error("--rounds, --iterations and --threads must be at least 1")
    path = Path(args.zoo) / f"{args.model}.onnx"
    if not path.exists():
        ap.error(f"no model {path}")
    case, feeds = compare_ort.pick_case(args.model)
    peer_round, peer_compute = PEERS[args.peer]
    if args.peer == "openvino":
        import openvino as ov
        peer_version = (f"openvino {ov.get_version().split('-')[0]} "
                        f"({'bf16' if args.precision == 'fast' else 'f32'})")
    else:
        peer_version = f"onnxruntime {ort.__version__}"
    osp, peer = [], []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = compare_ort.save_inputs(Path(tmp), args.model, feeds)
        for r in range(args.rounds):
            osp.append(osprey_round(args, path, inputs))
            peer.append(peer_round(args, path, feeds, tmp))
            print(f"round {r + 1}: Osprey p50 {osp[-1][0]:.3f} ms, {args.peer} p50 {peer[-1][0]:.3f} ms",
                  file=sys.stderr)

    med = statistics.median
    ratios = [a[0] / b[0] for a, b in zip(osp, peer)]
    print(f"{args.model} {case}, {args.threads} thread(s), {peer_version}; "
          f"{args.rounds} rounds x (warmup {args.warmup}, iterations {args.iterations})")
    print(f"p50: Osprey {med(a[0] for a in osp):.3f} ms, {args.peer} {med(b[0] for b in peer):.3f} ms; "
          f"per-round ratio median {med(ratios):.3f}x [{min(ratios):.3f}-{max(ratios):.3f}]\n")

    def by_type(rounds):
        totals = collections.defaultdict(list)
        for _, nodes in rounds:
            per = collections.defaultdict(float)
            for _, op, ms in nodes:
                per[op] += ms
            for op, ms in per.items():
                totals[op].append(ms)
        return sorted(((op, med(v)) for op, v in totals.items()), key=lambda x: -x[1])

    report = {"model": args.model, "case": case, "threads": args.threads, "peer": args.peer,
              "precision": args.precision,
              "osprey_p50_ms": med(a[0] for a in osp), "peer_p50_ms": med(b[0] for b in peer),
              "round_ratios": ratios, "pairs": [], "groups": {}}
    for label, key, rounds in (("Osprey", "osprey", osp), (args.peer, "peer", peer)):
        totals = by_type(rounds)
        print(f"| {label} op type | ms/run |\n| --- | --- |")
        for op, ms in totals:
            print(f"| {op} | {ms:.3f} |")
        print()
        report[f"{key}_by_op_type"] = dict(totals)

    o_nodes = [[n for n in nodes if is_osprey_compute(n[1])] for _, nodes in osp]
    p_nodes = [[n for n in nodes if n[1] in peer_compute] for _, nodes in peer]
    if len(o_nodes[0]) != len(p_nodes[0]):
        print(f"Not paired: Osprey runs {len(o_nodes[0])} convolutions and products, {args.peer} "
              f"{len(p_nodes[0])} (their fusions differ).")
    else:
        pairs = []
        for i in range(len(o_nodes[0])):
            o_ms = med(r[i][2] for r in o_nodes)
            p_ms = med(r[i][2] for r in p_nodes)
            pairs.append((o_nodes[0][i][0], o_ms, p_ms, p_nodes[0][i][0]))
        shown = sorted(pairs, key=lambda p: p[2] - p[1])[: args.top] if args.top else pairs
        print(f"| Osprey node | Osprey ms | {args.peer} ms | ratio | {args.peer} node |\n| --- | --- | --- | --- | --- |")
        for o, o_ms, p_ms, p in shown:
            print(f"| {o} | {o_ms:.3f} | {p_ms:.3f} | {ratio(o_ms, p_ms)} | {p} |")
        o_sum, p_sum = sum(p[1] for p in pairs), sum(p[2] for p in pairs)
        print(f"| all {len(pairs)} | {o_sum:.3f} | {p_sum:.3f} | {ratio(o_sum, p_sum)} | |\n")
        report["pairs"] = [{"osprey": o, "osprey_ms": a, "peer_ms": b, "peer": p}
                           for o, a, b, p in pairs]
        if args.group:
            groups = collections.defaultdict(lambda: [0.0, 0.0, 0])
            for o, o_ms, p_ms, _ in pairs:
                m = re.search(args.group, o)
                key = " ".join(g for g in m.groups() if g) if m and m.groups() else (m.group(0) if m else "(other)")
                groups[key][0] += o_ms
                groups[key][1] += p_ms
                groups[key][2] += 1
            print(f"| group | nodes | Osprey ms | {args.peer} ms | ratio |\n| --- | --- | --- | --- | --- |")
            for key, (a, b, n) in sorted(groups.items()):
                print(f"| {key} | {n} | {a:.3f} | {b:.3f} | {ratio(a, b)} |")
            report["groups"] = {k: {"nodes": n, "osprey_ms": a, "peer_ms": b}
                                for k, (a, b, n) in groups.items()}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
