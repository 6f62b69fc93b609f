"""End-to-end: `osprey bench` on a tiny model (written here with onnx.helper) with osprey and
onnxruntime, then `osprey select` on its results.json. Checks exit codes, that a recommendation
line appears, that --json parses and names a candidate that was measured, that the same input
gives the same bytes, and that an impossible constraint exits 1 saying why each candidate failed.
Then `osprey select` on a small hand-written perf.json (the format `osprey perf --out` writes):
one candidate per step, the failed step refused, memory and cold start dropped with a note,
and a mix of bench and perf results refused. Timing values are never asserted.

    python tests/bench/select/select_e2e_test.py build-select/cli/osprey
Exit 0 = pass, 1 = fail, 77 = skipped (onnx not importable)."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from e2e_util import FAILURES, check, tiny_model  # noqa: E402


def run(osprey, *args):
    r = subprocess.run([osprey, *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def perf_step(concurrency, completed, failed, p99):
    return {"mode": "concurrency", "concurrency": concurrency, "windows": 3, "stable": True,
            "measured_s": 1.0, "completed": completed, "failed": failed, "throughput": float(completed),
            "latency_ms": {"min": p99 / 3, "mean": p99 / 2, "stdev": 0.1, "p50": p99 / 2, "p90": p99 * 0.8,
                           "p95": p99 * 0.9, "p99": p99, "max": p99 * 2},
            "breakdown_us": {"server_stats": False, "where": ""}, "server": {},
            "errors": {"connection reset": failed} if failed else {}}


def check_perf_results(osprey, tmp, bench_results):
    perf = tmp / "perf.json"
    perf.write_text(json.dumps({
        "settings": {"model": "tiny", "url": "localhost:8000", "protocol": "http", "input_data": "random",
                     "batch_size": 1, "shapes": [], "http_json": False},
        "steps": [perf_step(1, 900, 0, 2.0), perf_step(2, 1500, 0, 3.0), perf_step(8, 1800, 5, 12.0)]}))
    rc, text, se = run(osprey, "select", str(perf))
    check(rc == 0, f"select on perf.json exits 0 (rc {rc}, stderr {se})")
    check("Measured: through a server (osprey perf)" in text, f"says what was measured: {text}")
    check("Note: memory (weight 0.200) dropped from the weights" in text, f"memory dropped with a note: {text}")
    check("Note: cold_start (weight 0.100) dropped" in text, f"cold start dropped with a note: {text}")
    check("Recommended: server@localhost:8000 with protocol=http, concurrency=" in text,
          f"recommends a perf step: {text}")
    check("concurrency=8 batch=1 shapes=default: ineligible: 5 failed requests" in text,
          f"the failed step is refused by name: {text}")
    rc2, text2, _ = run(osprey, "select", str(perf))
    check(rc2 == 0 and text2 == text, "perf: same input, same output")
    rc, js, se = run(osprey, "select", str(perf), "--json")
    check(rc == 0, f"select --json on perf.json exits 0 (rc {rc}, stderr {se})")
    if rc == 0:
        doc = json.loads(js)
        check(doc["measured"] == "server" and len(doc["notes"]) == 2, f"json notes: {doc.get('notes')}")
        check(doc["weights"]["memory"] == 0 and doc["weights"]["cold_start"] == 0, f"weights: {doc['weights']}")
        check(len(doc["ranking"]) == 2 and len(doc["ineligible"]) == 1, "2 ranked, 1 refused")
        check(doc["ineligible"][0]["config"]["failed_requests"] == 5, f"failed count: {doc['ineligible']}")
    rc, _, se = run(osprey, "select", str(perf), bench_results)
    check(rc == 1 and "the results mix" in se and "select over one kind at a time" in se,
          f"bench + perf results are refused with why: {se}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    osprey = sys.argv[1]
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("skipped: onnx is not importable", file=sys.stderr)
        return 77
    tmp = Path(tempfile.mkdtemp(prefix="osprey_select_e2e_"))
    model = tmp / "tiny.onnx"
    tiny_model(model)
    out = tmp / "bench"
    rc, so, se = run(osprey, "bench", str(model), "--frameworks", "osprey,onnxruntime", "--threads", "1",
                     "--batch", "1,2", "--warmup", "1", "--iterations", "6", "--window", "3", "--out", str(out))
    check(rc == 0, f"osprey bench exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc != 0:
        return 1
    results = str(out / "results.json")
    measured = {(m["framework"], m["cell"]) for m in json.load(open(results))["measurements"]
                if m["status"] == "ok"}
    check(len(measured) >= 2, f"osprey measured both batches: {measured}")

    rc, text, se = run(osprey, "select", results)
    check(rc == 0, f"select exits 0 (rc {rc}, stderr {se})")
    check(any(l.startswith("Recommended: ") for l in text.splitlines()), f"a recommendation line: {text}")
    check("rank  framework" in text, f"a ranking table: {text}")
    rc2, text2, _ = run(osprey, "select", results)
    check(rc2 == 0 and text2 == text, "same input, same output")

    rc, js, se = run(osprey, "select", results, "--json", "--sla", "p99<=10s", "--min-agreement", "cosine>=0.999",
                     "--weights", "latency=1,throughput=1")
    check(rc == 0, f"select --json exits 0 (rc {rc}, stderr {se})")
    if rc == 0:
        doc = json.loads(js)
        rec = doc["recommendation"]
        check(rec is not None and rec["framework"] in ("osprey", "onnxruntime"), f"recommendation: {rec}")
        check(rec["config"]["threads"] == 1 and rec["config"]["batch"] in (1, 2), f"config: {rec}")
        check(doc["weights"]["latency"] == 0.5 and doc["weights"]["memory"] == 0, f"weights: {doc['weights']}")
        check(len(doc["ranking"]) + len(doc["ineligible"]) == 4, "2 batches x 2 frameworks considered")
        for r in doc["ranking"][1:]:
            check(r["why_lost"] != "", f"every loser says why: {r}")

    rc, text, se = run(osprey, "select", results, "--sla", "p50<=0.000001ms")
    check(rc == 1, f"impossible SLA exits 1 (rc {rc})")
    check("no candidate meets the constraints" in se and "p50" in se, f"says why each failed: {se}")
    check("Why each failed:" in text, f"stdout lists the failures: {text}")

    rc, _, se = run(osprey, "select", results, "--sla", "p99<30ms")
    check(rc == 1 and "'p99<30ms'" in se, f"bad --sla names its token: {se}")
    rc, _, se = run(osprey, "select", results, "--weights", "speed=1")
    check(rc == 1 and "'speed'" in se, f"bad --weights names the criterion: {se}")
    rc, _, se = run(osprey, "select", str(tmp / "missing.json"))
    check(rc == 1 and "missing.json" in se, f"missing file is named: {se}")

    check_perf_results(osprey, tmp, results)

    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("select_e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
