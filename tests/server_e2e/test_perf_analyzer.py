"""Triton's perf_analyzer against `osprey serve`: zero errors at concurrency 1..16, and
dynamic batching visible in the statistics. Timings are printed, never asserted."""

import json
import subprocess
import urllib.request

import pytest


def run_perf_analyzer(perf_analyzer, model, url, protocol, concurrency, tmp_path,
                      interval_ms=300, check=True):
    csv = tmp_path / f"{model}_{protocol}_{concurrency.replace(':', '-')}.csv"
    cmd = [perf_analyzer, "-m", model, "-u", url, "-i", protocol,
           "--concurrency-range", concurrency, "--measurement-interval", str(interval_ms),
           "--stability-percentage", "1000", "--max-trials", "3", "-f", str(csv)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    if check:
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-4000:]}"
        assert "error" not in proc.stdout.lower(), proc.stdout[-4000:]
    return proc, csv


def model_stats(server, model):
    with urllib.request.urlopen(f"http://{server.http_url}/v2/models/{model}/stats", timeout=10) as r:
        return json.loads(r.read())["model_stats"][0]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_concurrency_1_to_16_without_errors(server, perf_analyzer, protocol, tmp_path):
    url = server.http_url if protocol == "http" else server.grpc_url
    before = model_stats(server, "add_sub")
    proc, csv = run_perf_analyzer(perf_analyzer, "add_sub", url, protocol, "1:16:5", tmp_path)
    rows = csv.read_text().strip().splitlines()
    assert rows[0].startswith("Concurrency"), rows[0]
    # perf_analyzer writes its CSV rows ordered by throughput, not by concurrency.
    assert sorted(int(r.split(",")[0]) for r in rows[1:]) == [1, 6, 11, 16], rows
    print("\n".join(rows))
    after = model_stats(server, "add_sub")
    assert int(after["inference_stats"]["fail"]["count"]) == int(before["inference_stats"]["fail"]["count"])
    assert int(after["inference_stats"]["success"]["count"]) > int(before["inference_stats"]["success"]["count"])


def test_dynamic_batching_is_visible_at_concurrency_16(server, perf_analyzer, tmp_path):
    before = model_stats(server, "add_sub")
    run_perf_analyzer(perf_analyzer, "add_sub", server.grpc_url, "grpc", "16:16", tmp_path,
                      interval_ms=500)
    after = model_stats(server, "add_sub")
    inferences = int(after["inference_count"]) - int(before["inference_count"])
    executions = int(after["execution_count"]) - int(before["execution_count"])
    assert executions > 0
    print(f"inference_count {inferences} / execution_count {executions} = {inferences / executions:.2f}")
    assert inferences / executions > 1.0
    sizes = {int(b["batch_size"]) for b in after.get("batch_stats", [])}
    assert any(s > 1 for s in sizes), after.get("batch_stats")
    metrics = server.metrics()
    assert 'osprey_inference_exec_count_total{model="add_sub"' in metrics
