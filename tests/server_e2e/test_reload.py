"""Availability-preserving reload in poll mode, under perf_analyzer load: a new version
replaces the old one with zero failed requests; a corrupt newer version leaves it serving."""

import json
import shutil
import subprocess
import time
import urllib.request

import numpy as np
import tritonclient.http as httpclient


def index(server):
    req = urllib.request.Request(f"http://{server.http_url}/v2/repository/index", data=b"{}",
                                 method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def wait_for(predicate, what, server, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        entries = index(server)
        if predicate(entries):
            return entries
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; index: {index(server)}\n{server.output()[-2000:]}")


def check_add_sub(server):
    client = httpclient.InferenceServerClient(server.http_url)
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    inputs = [httpclient.InferInput("INPUT0", [1, 16], "FP32"), httpclient.InferInput("INPUT1", [1, 16], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(a)
    np.testing.assert_array_equal(client.infer("add_sub", inputs).as_numpy("OUTPUT0"), a + a)


def test_reload_under_load_and_corrupt_version(start_server, demo_repo, perf_analyzer, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(demo_repo / "add_sub", repo / "add_sub")
    server = start_server(repo, "--model-control-mode", "poll", "--repository-poll-secs", "1")
    check_add_sub(server)

    csv = tmp_path / "reload.csv"
    load = subprocess.Popen(
        [perf_analyzer, "-m", "add_sub", "-u", server.http_url, "-i", "http",
         "--concurrency-range", "4:4", "--measurement-interval", "4000",
         "--stability-percentage", "1000", "--max-trials", "3", "-f", str(csv)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(2)
        shutil.copytree(repo / "add_sub" / "1", repo / "add_sub" / "2")
        wait_for(lambda e: any(m["name"] == "add_sub" and m["version"] == "2" and m["state"] == "READY"
                               for m in e), "version 2 READY", server)
        assert load.poll() is None, "perf_analyzer finished before the reload: lengthen its run"
        (repo / "add_sub" / "3").mkdir()
        (repo / "add_sub" / "3" / "model.onnx").write_bytes(b"this is not an ONNX model")
        entries = wait_for(lambda e: any(m["name"] == "add_sub" and m["version"] == "3" and m["reason"]
                                         for m in e), "version 3 failure reported", server)
        print(json.dumps(entries, indent=1))
        ready = [m for m in entries if m["name"] == "add_sub" and m["state"] == "READY"]
        assert [m["version"] for m in ready] == ["2"], entries
        check_add_sub(server)
        out, _ = load.communicate(timeout=120)
    finally:
        if load.poll() is None:
            load.kill()
    assert load.returncode == 0, out[-4000:]
    assert "error" not in out.lower(), out[-4000:]
    stats = json.loads(urllib.request.urlopen(f"http://{server.http_url}/v2/models/add_sub/stats").read())
    fails = sum(int(m["inference_stats"]["fail"]["count"]) for m in stats["model_stats"])
    assert fails == 0, stats
