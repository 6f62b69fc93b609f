"""End-to-end: `osprey bench MODEL --frameworks ... --out DIR` on a tiny model written here with
onnx.helper. Checks that the report files exist and agree with each other (rows = cells x
frameworks, environment and settings in the JSON, every framework present with results or a
reason). Timing values are never asserted.

    python tests/bench/bench_e2e_test.py build-bench/cli/osprey
Exit 0 = pass, 1 = fail, 77 = skipped (onnx not importable)."""

import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_util import FAILURES, check, tiny_model  # noqa: E402


HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def bench(osprey, *args):
    r = subprocess.run([osprey, "bench", *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def load_reports(out):
    rows = list(csv.DictReader(open(out / "results.csv")))
    report = json.load(open(out / "results.json"))
    md = (out / "summary.md").read_text()
    return rows, report, md


def affinity_and_shape_mode(osprey, model, tmp):
    import onnx
    out = tmp / "sweep"
    rc, so, se = bench(osprey, str(model), "--frameworks", "osprey,onnxruntime,torch", "--threads", "2",
                       "--batch", "2", "--affinity", "off,on", "--shape-mode", "dynamic,fixed", "--warmup", "1",
                       "--iterations", "4", "--window", "2", "--out", str(out))
    check(rc == 0, f"affinity/shape-mode run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc != 0:
        return
    rows, report, md = load_reports(out)
    check(len(rows) == 4 * 3, f"CSV rows = 4 cells x 3 frameworks, got {len(rows)}")
    check(report["settings"]["affinity"] == ["off", "on"] and
          report["settings"]["shape_modes"] == ["dynamic", "fixed"], "settings record both sweeps")
    cells = {c["id"]: c for c in report["cells"]}
    check(set(cells) == {"m0_s0_b2_t2_fp32", "m0_s0_b2_t2_pin_fp32", "m0_s0_b2_fixed_t2_fp32",
                         "m0_s0_b2_fixed_t2_pin_fp32"}, f"one cell per combination: {sorted(cells)}")
    fixed_file = out / "models" / "m0_s0_b2_fixed.onnx"
    for c in cells.values():
        if c["shape_mode"] == "fixed":
            check(c["model_file"] == str(fixed_file) and "fixed shapes" in c["setup_note"], f"fixed cell: {c}")
        else:
            check(c["model_file"] == c["model"], f"dynamic cell runs the model as given: {c}")
    if fixed_file.is_file():
        dims = [[d.dim_value if d.HasField("dim_value") else d.dim_param for d in i.type.tensor_type.shape.dim]
                for i in onnx.load(str(fixed_file)).graph.input]
        check(dims == [[2, 8]], f"the fixed copy's input is [2, 8]: {dims}")
    else:
        check(False, f"fixed-shape copy written: {fixed_file}")
    combos = {(r["framework"], r["shape_mode"], r["affinity"]): r for r in rows}
    for fw in ("osprey", "onnxruntime"):
        for mode in ("dynamic", "fixed"):
            for aff in ("off", "on"):
                r = combos.get((fw, mode, aff))
                check(r is not None and r["status"] == "ok", f"{fw} {mode} affinity {aff} measured: {r}")
    for aff, status in (("on", "unavailable"), ("off", "load_failed")):
        r = combos.get(("torch", "fixed", aff), {})
        check(r.get("status") == status, f"torch affinity {aff}: {status}: {r}")
    check("thread pinning is not supported by torch" in combos.get(("torch", "dynamic", "on"), {}).get("reason", ""),
          "torch's pinned cell gives the reason")
    for m in report["measurements"]:
        if m["status"] != "ok":
            continue
        pinned = cells[m["cell"]]["affinity"] == "on"
        if m["framework"] == "osprey":
            check(m["settings"].get("pin_threads") is pinned, f"osprey settings say pin_threads={pinned}")
        if m["framework"] == "onnxruntime":
            aff = m["settings"].get("intra_op_thread_affinities")
            check((aff != "not set") == pinned, f"onnxruntime affinities match the cell: {aff}")
            outs = m["agreement"]["outputs"]
            check(len(outs) == 1 and outs[0]["compared"] and outs[0]["max_abs"] < 1e-4,
                  f"onnxruntime agrees with osprey: {m['agreement']}")
    check("| 2 | fixed | 2 | on | fp32 | osprey |" in md, "Markdown shows shape mode and affinity")


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
    tmp = Path(tempfile.mkdtemp(prefix="osprey_bench_e2e_"))
    model = tmp / "tiny.onnx"
    tiny_model(model)

    # 1. Osprey against the real onnxruntime adapter, plus a framework with no adapter.
    out = tmp / "real"
    rc, so, se = bench(osprey, "--frameworks", "osprey,onnxruntime,nosuchfw", str(model), "--threads", "1",
                       "--batch", "1,2", "--warmup", "1", "--iterations", "6", "--window", "3", "--out", str(out))
    check(rc == 0, f"real run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc == 0:
        rows, report, md = load_reports(out)
        check(len(rows) == 2 * 3, f"CSV rows = 2 cells x 3 frameworks, got {len(rows)}")
        check(len(report["measurements"]) == len(rows), "JSON measurements match CSV rows")
        check(report["environment"]["cpu_model"] != "", "JSON has the environment")
        check(report["settings"]["frameworks"] == ["osprey", "onnxruntime", "nosuchfw"], "JSON has the settings")
        check(report["settings"]["batches"] == [1, 2] and report["settings"]["mode"] == "iterations",
              "settings record the sweep and mode")
        for row in rows:
            fw = row["framework"]
            if fw == "osprey":
                check(row["status"] == "ok" and row["iterations"] == "6", f"osprey measured: {row}")
                check(float(row["p50_ms"]) > 0, "osprey p50 is present")
            elif fw == "onnxruntime":
                check(row["status"] == "ok" or row["reason"] != "", f"onnxruntime has results or a reason: {row}")
            elif fw == "nosuchfw":
                check(row["status"] == "unavailable" and "no adapter" in row["reason"],
                      f"missing adapter is reported: {row}")
        for m in report["measurements"]:
            if m["framework"] == "onnxruntime" and m["status"] == "ok":
                check(m["settings"] != {}, "onnxruntime reports its settings")
                outs = m["agreement"]["outputs"]
                check(m["agreement"]["reference"] == "osprey" and len(outs) == 1 and outs[0]["compared"],
                      f"onnxruntime's output compared with osprey's: {m['agreement']}")
                if outs and outs[0]["compared"]:
                    check(outs[0]["max_abs"] < 1e-4 and outs[0]["cosine"] > 0.9999,
                          f"onnxruntime agrees with osprey: {outs[0]}")
                    check(outs[0].get("topk") == 5, "a [N, 5] float output gets top-k agreement")
            if m["status"] == "ok":
                check(len(m["latencies_ms"]) == 6 and len(m["window_p50_ms"]) == 2,
                      "JSON keeps every latency and per-window p50s")
        check(md.count("| 1 | dynamic | 1 | off | fp32 |") + md.count("| 2 | dynamic | 1 | off | fp32 |") == 6,
              "Markdown table has 6 rows")
        for name in ("x.npy",):
            check((out / "inputs" / "m0_s0_b2" / name).is_file(), "inputs written once per batch")
        # Osprey is measured like every peer: in a process of its own (`osprey bench-adapter`).
        fws = {f["name"]: f for f in report["frameworks"]}
        check(fws["osprey"]["in_process"] is False, f"osprey ran out of process: {fws['osprey']}")
        for m in report["measurements"]:
            if m["framework"] == "osprey":
                check(m["status"] == "ok" and m["settings"].get("in_process") is False and
                      "own process" in m["notes"], f"osprey's settings say out of process: {m}")
                check(m["peak_rss_bytes"] > 0 and m["rss_bytes"] > 0, f"osprey's adapter reports its RSS: {m}")

    # 1b. --osprey-in-process keeps the old in-process runner, and the report says so.
    out = tmp / "inproc"
    rc, so, se = bench(osprey, str(model), "--frameworks", "osprey", "--osprey-in-process", "--threads", "1",
                       "--warmup", "1", "--iterations", "2", "--out", str(out))
    check(rc == 0, f"in-process run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc == 0:
        rows, report, md = load_reports(out)
        check(report["frameworks"][0]["in_process"] is True, f"osprey ran in process: {report['frameworks']}")
        m = report["measurements"][0]
        check(m["status"] == "ok" and m["settings"].get("in_process") is True, f"in-process settings: {m}")
        check("in the benchmark process" in md, "Markdown says osprey ran in the benchmark process")

    # 2. Fake peers: crash, garbage, refusal; and Osprey's 'fast' precision (bf16: measured on a
    #    CPU with native bf16, refused with the reason elsewhere).
    out = tmp / "fake"
    rc, so, se = bench(osprey, str(model), "--frameworks", "osprey,crasher,garbage,refuses,fake_ok",
                       "--peers-dir", str(HERE / "fake_peers"), "--python", sys.executable, "--threads", "1",
                       "--precision", "fp32,fast", "--warmup", "1", "--iterations", "3", "--out", str(out))
    check(rc == 0, f"fake run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc == 0:
        rows, report, md = load_reports(out)
        check(len(rows) == 2 * 5, f"CSV rows = 2 cells x 5 frameworks, got {len(rows)}")
        by = {(r["framework"], r["precision"]): r for r in rows}
        check(by[("crasher", "fp32")]["status"] == "load_failed" and
              "simulated crash" in by[("crasher", "fp32")]["reason"], "crash reported with stderr tail")
        check(by[("garbage", "fp32")]["status"] == "unavailable" and
              "not a JSON object" in by[("garbage", "fp32")]["reason"], "garbage reported")
        check(by[("refuses", "fp32")]["reason"] == "refuses: unsupported op Relu", "refusal reason kept")
        fast = by[("osprey", "fast")]
        check((fast["status"] == "ok" and fast["precision_used"] == "bf16") or
              (fast["status"] == "load_failed" and "native bfloat16" in fast["reason"]),
              f"osprey fast measured in bf16 or visibly refused: {fast}")
        check(by[("fake_ok", "fp32")]["status"] == "ok", "fake peer measured")
        check(fast["status"] == "ok" or "native bfloat16" in md, "Markdown shows why fast is unavailable")

    out = tmp / "opts"
    rc, so, se = bench(osprey, str(model), "--frameworks", "osprey,onnxruntime", "--peer-option",
                       "onnxruntime:no_such_option=1", "--threads", "1", "--iterations", "2", "--out", str(out))
    check(rc == 0, f"peer-option run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc == 0:
        rows, report, md = load_reports(out)
        ort = [r for r in rows if r["framework"] == "onnxruntime"][0]
        check(ort["status"] == "load_failed" and "no_such_option" in ort["reason"],
              f"the adapter option reached onnxruntime's adapter: {ort}")
        check(report["settings"]["peer_options"] == ["onnxruntime:no_such_option=1"], "peer options recorded")

    # 3. A model Osprey cannot load (com.microsoft Inverse, an onnxruntime contrib op): with the
    #    inputs given as files the others still run and Osprey's rows say why.
    import numpy as np
    from onnx import TensorProto, helper, save
    inv = tmp / "inverse.onnx"
    graph = helper.make_graph([helper.make_node("Inverse", ["x"], ["y"], domain="com.microsoft")], "inv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]),
         str(inv))
    feeds = tmp / "inv_inputs"
    feeds.mkdir()
    np.save(feeds / "x.npy", np.array([[2, 0], [0, 4]], dtype=np.float32))
    out = tmp / "inverse"
    rc, so, se = bench(osprey, str(inv), "--frameworks", "osprey,onnxruntime", "--inputs", str(feeds), "--threads", "1",
                       "--warmup", "1", "--iterations", "3", "--out", str(out))
    check(rc == 0, f"unloadable-model run exits 0 (rc {rc}, stderr {se[-800:]})")
    if rc == 0:
        rows, report, md = load_reports(out)
        by = {r["framework"]: r for r in rows}
        check(by["osprey"]["status"] == "load_failed" and "Inverse" in by["osprey"]["reason"],
              f"osprey's failure names the op: {by['osprey']}")
        check(by["onnxruntime"]["status"] == "ok" or by["onnxruntime"]["reason"] != "",
              f"onnxruntime measured or explained: {by['onnxruntime']}")
    rc, so, se = bench(osprey, str(inv), "--frameworks", "osprey,onnxruntime", "--out", str(tmp / "inv2"))
    check(rc != 0 and "--inputs" in se, f"without input files the error says how to proceed: {se}")

    # 4. The affinity and shape-mode sweeps (torch cannot pin: its pinned cells say so).
    affinity_and_shape_mode(osprey, model, tmp)

    # 5. Usage errors are one clear line.
    rc, so, se = bench(osprey, str(model), "--frameworks", "osprey")
    check(rc != 0 and "--out" in se, f"--frameworks without --out is refused: {se}")
    rc, so, se = bench(osprey, str(model), "--frameworks", "Bad Name", "--out", str(tmp / "x"))
    check(rc != 0 and "not a framework name" in se, f"bad framework name refused: {se}")
    rc, so, se = bench(osprey, str(model), "--out", str(tmp / "z"), "--peer-option", "onnxruntime:k=v")
    check(rc != 0 and "not in --frameworks" in se, f"--peer-option for an unlisted framework refused: {se}")
    rc, so, se = bench(osprey, str(model), "--out", str(tmp / "a"), "--affinity", "off,off")
    check(rc != 0 and "'off' is listed twice" in se, f"a repeated --affinity value is refused: {se}")
    rc, so, se = bench(osprey, str(model), "--out", str(tmp / "b"), "--shape-mode", "static")
    check(rc != 0 and "--shape-mode" in se, f"an unknown --shape-mode is refused: {se}")
    rc, so, se = bench(osprey, str(model), "--out", str(tmp / "y"), "--json")
    check(rc != 0 and "--json" in se, f"--json in comparison mode refused: {se}")

    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("bench_e2e: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
