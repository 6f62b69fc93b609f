"""Fixtures for the zoo agreement tests.

Environment:
  OSPREY_BIN         the CLI (default <repo>/build/cli/osprey)
  OSPREY_ZOO_DIR     the zoo (default <repo>/models); generated here when incomplete
  OSPREY_REQUIRE_ZOO=1  a missing zoo or CLI fails the tests instead of skipping them (CI)
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ZOO_TOOLS = REPO / "tools" / "zoo"
sys.path.insert(0, str(ZOO_TOOLS))

import make_zoo  # noqa: E402  (cheap: torch is imported only when building)


def pytest_configure(config):
    config.addinivalue_line("markers", "zoo: runs Osprey on the model zoo and compares with onnxruntime")


def unavailable(reason):
    """Skips, or fails when OSPREY_REQUIRE_ZOO=1."""
    if os.environ.get("OSPREY_REQUIRE_ZOO") == "1":
        pytest.fail(f"{reason} (OSPREY_REQUIRE_ZOO=1)", pytrace=False)
    pytest.skip(reason)


def _zoo_complete(zoo):
    manifest = zoo / "manifest.json"
    if not manifest.exists():
        return False
    listed = {m["name"] for m in json.loads(manifest.read_text())["models"]}
    return all(name in listed and (zoo / spec.file).exists() for name, spec in make_zoo.MODELS.items())


@pytest.fixture(scope="session")
def zoo_dir():
    zoo = Path(os.environ.get("OSPREY_ZOO_DIR", REPO / "models"))
    if not _zoo_complete(zoo):
        cmd = [sys.executable, str(ZOO_TOOLS / "make_zoo.py"), "--out", str(zoo)]
        print(f"\n[zoo] generating: {' '.join(cmd)}", flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0 or not _zoo_complete(zoo):
            unavailable(f"model zoo could not be generated in {zoo}:\n{proc.stdout[-3000:]}")
    return zoo


@pytest.fixture(scope="session")
def osprey_bin():
    path = Path(os.environ.get("OSPREY_BIN", REPO / "build" / "cli" / "osprey"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"Osprey CLI not found at {path} (build it, or set OSPREY_BIN)")
    return path


@pytest.fixture(scope="session")
def ort_sessions():
    """Reference sessions, one per model file: onnxruntime CPU, 1 thread, graph
    optimizations off, so the reference computes the graph as written. (ORT's own
    fusions move results: on ppocr_det its optimized and unoptimized outputs differ by
    8.9e-5, close to the 1e-4 agreement limit.)"""
    import onnxruntime as ort

    cache = {}

    def get(path):
        if path not in cache:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            cache[path] = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return cache[path]

    return get
