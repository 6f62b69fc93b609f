"""tools/bench/profile_vs_ort.py on a zoo model: the node-by-node comparison pairs every
convolution and product of MobileNetV2 with onnxruntime's (and OpenVINO's), in order, with real
timings."""

import json
import subprocess
import sys

from conftest import REPO
from test_zoo_fast import fast_available  # noqa: F401 (a fixture)

TOOL = REPO / "tools" / "bench" / "profile_vs_ort.py"


def run_tool(tmp_path, zoo_dir, osprey_bin, *extra):
    out = tmp_path / "profile.json"
    cmd = [sys.executable, str(TOOL), "mobilenetv2", "--rounds", "2", "--warmup", "1",
           "--iterations", "2", "--zoo", str(zoo_dir), "--osprey", str(osprey_bin),
           "--json", str(out), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return done, out


def test_pairs_every_convolution_in_order(tmp_path, zoo_dir, osprey_bin):
    done, out = run_tool(tmp_path, zoo_dir, osprey_bin, "--group", r"/(features\.\d+)/")
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    pairs = report["pairs"]
    # MobileNetV2: 52 convolutions and the classifier's product, on both sides.
    assert len(pairs) == 53, [p["osprey"] for p in pairs]
    assert all(p["osprey_ms"] > 0 and p["peer_ms"] > 0 for p in pairs)
    assert pairs[0]["osprey"].startswith("/features/features.0/")
    assert "classifier" in pairs[-1]["osprey"] and "classifier" in pairs[-1]["peer"]
    assert report["peer"] == "onnxruntime"
    assert len(report["round_ratios"]) == 2 and all(r > 0 for r in report["round_ratios"])
    assert "com.osprey.FusedConv" in report["osprey_by_op_type"]
    assert "Conv" in report["peer_by_op_type"]
    groups = report["groups"]
    assert "features.1" in groups and sum(g["nodes"] for g in groups.values()) == 53
    assert "| Osprey node |" in done.stdout


def test_pairs_with_openvino(tmp_path, zoo_dir, osprey_bin):
    done, out = run_tool(tmp_path, zoo_dir, osprey_bin, "--peer", "openvino")
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["peer"] == "openvino" and report["precision"] == "exact"
    assert "(f32)" in done.stdout.splitlines()[0]
    pairs = report["pairs"]
    assert len(pairs) == 53, [p["peer"] for p in pairs]
    # OpenVINO keeps the ONNX node names: each pair is the same layer on both sides.
    assert pairs[0]["peer"].startswith("/features/features.0/features.0.0/Conv")
    assert all(p["osprey"].split("/")[2] == p["peer"].split("/")[2] for p in pairs[:-1])
    assert all(p["peer_ms"] > 0 for p in pairs)
    assert "GroupConvolution" in report["peer_by_op_type"]


def test_fast_mode_pairs_with_openvino_in_bf16(tmp_path, zoo_dir, osprey_bin, fast_available):
    done, out = run_tool(tmp_path, zoo_dir, osprey_bin, "--peer", "openvino", "--precision", "fast")
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["precision"] == "fast" and report["peer"] == "openvino"
    assert "(bf16)" in done.stdout.splitlines()[0]
    # Fast mode keeps every convolution and the classifier a node of its own.
    assert len(report["pairs"]) == 53 and all(p["osprey_ms"] > 0 for p in report["pairs"])


def test_bad_arguments_are_named(tmp_path, zoo_dir, osprey_bin):
    done, _ = run_tool(tmp_path, zoo_dir, osprey_bin, "--rounds", "0")
    assert done.returncode == 2 and "--rounds" in done.stderr
    done = subprocess.run([sys.executable, str(TOOL), "no_such_model", "--zoo", str(zoo_dir)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no model" in done.stderr
