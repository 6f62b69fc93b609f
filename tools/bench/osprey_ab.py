"""Interleaved A/B of two Osprey configurations on one model: extra `osprey bench` arguments
(an option such as --blocked-layout auto vs off), optionally environment settings, and
optionally two builds (--b-osprey: side B's binary, e.g. a copy of the build before a change).

Rounds alternate A B A B, each one `osprey bench --json --profile --profile-top 0` run in its own
process with the same warmup and iterations. Reports each side's median p50, the median and
range of the per-round p50 ratios A / B (each pairs two runs made back to back, which cancels
most of a noisy machine's drift), and the median per-run time of node groups: per op type, or
per `--group` regex match (its groups joined, e.g. stage and role of ResNet's convolutions).

    .venv/bin/python tools/bench/osprey_ab.py models/resnet50.onnx \\
        --a=--blocked-layout=auto --b=--blocked-layout=off --rounds 6 \\
        --group '/(layer\\d)/layer\\d\\.\\d/(conv\\d|downsample)'
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(binary, model, extra, env_settings, args):
    env = dict(os.environ)
    for kv in env_settings:
        k, _, v = kv.partition("=")
        env[k] = v
    cmd = [binary, "bench", model, "--threads", str(args.threads), "-w", str(args.warmup),
           "-n", str(args.iterations), "--profile", "--profile-top", "0", "--json"]
    for s in args.shape:
        cmd += ["-s", s]
    cmd += shlex.split(extra)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def groups(report, pattern):
    sums = {}
    for n in report["profile"]["top_nodes"]:
        m = pattern.search(n["name"]) if pattern else None
        key = " ".join(m.groups()) if m else "op " + n["op_type"]
        sums[key] = sums.get(key, 0.0) + n["ms_per_run"]
    return sums


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--a", default="", help="extra osprey bench arguments of side A (one string)")
    p.add_argument("--b", default="", help="extra osprey bench arguments of side B (one string)")
    p.add_argument("--a-env", nargs="*", default=[], help="NAME=VALUE environment settings of side A")
    p.add_argument("--b-env", nargs="*", default=[], help="NAME=VALUE environment settings of side B")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iterations", type=int, default=15)
    p.add_argument("-s", "--shape", action="append", default=[], help="passed to osprey bench -s")
    p.add_argument("--group", help="regex over node names; its groups name a node group")
    p.add_argument("--osprey", default=str(REPO / "build" / "cli" / "osprey"))
    p.add_argument("--b-osprey", help="side B's osprey binary (default: --osprey)")
    args = p.parse_args()
    pattern = re.compile(args.group) if args.group else None

    a_runs, b_runs = [], []
    for r in range(args.rounds):
        a_runs.append(run(args.osprey, args.model, args.a, args.a_env, args))
        b_runs.append(run(args.b_osprey or args.osprey, args.model, args.b, args.b_env, args))
        print(f"round {r + 1}: A p50 {a_runs[-1]['p50_ms']:.2f} ms, B p50 {b_runs[-1]['p50_ms']:.2f} ms",
              file=sys.stderr)
    ratios = [a["p50_ms"] / b["p50_ms"] for a, b in zip(a_runs, b_runs)]
    med = statistics.median
    print(f"{Path(args.model).name}, {args.threads} thread(s), {args.rounds} rounds x "
          f"(warmup {args.warmup}, iterations {args.iterations})")
    print(f"A = {' '.join([args.osprey, args.a] + args.a_env)}; "
          f"B = {' '.join([args.b_osprey or args.osprey, args.b] + args.b_env)}")
    print(f"p50 median: A {med(r['p50_ms'] for r in a_runs):.2f} ms, B {med(r['p50_ms'] for r in b_runs):.2f} ms; "
          f"per-round A/B: median {med(ratios):.3f}x [{min(ratios):.3f}-{max(ratios):.3f}]")
    ga = [groups(r, pattern) for r in a_runs]
    gb = [groups(r, pattern) for r in b_runs]
    keys = sorted(set().union(*ga, *gb))
    print("\n| node group | A ms/run | B ms/run | A - B |\n| --- | --- | --- | --- |")
    ta = tb = 0.0
    for k in keys:
        x, y = med(g.get(k, 0.0) for g in ga), med(g.get(k, 0.0) for g in gb)
        ta, tb = ta + x, tb + y
        print(f"| {k} | {x:.2f} | {y:.2f} | {x - y:+.2f} |")
    print(f"| sum of medians | {ta:.2f} | {tb:.2f} | {ta - tb:+.2f} |")


if __name__ == "__main__":
    main()
