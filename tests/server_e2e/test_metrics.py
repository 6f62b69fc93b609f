"""Prometheus metrics: the exposition passes `promtool check metrics`, and a real Prometheus
server scrapes the series (counters, histograms with buckets, gauges)."""

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient

from serve_util import free_port, unavailable


def infer_some(server, n=20):
    client = httpclient.InferenceServerClient(server.http_url)
    x = np.ones((2, 16), np.float32)
    for _ in range(n):
        inp = httpclient.InferInput("INPUT0", [2, 16], "FP32")
        inp.set_data_from_numpy(x)
        client.infer("identity_fp32", [inp])


def test_exposition_passes_promtool(server, tmp_path):
    promtool = shutil.which("promtool")
    if not promtool:
        unavailable("promtool not installed (Debian package prometheus)")
    infer_some(server)
    text = server.metrics()
    for name in ["osprey_inference_request_success_total", "osprey_inference_count_total",
                 "osprey_inference_exec_count_total", "osprey_request_duration_seconds_bucket",
                 "osprey_queue_duration_seconds_bucket", "osprey_compute_infer_duration_seconds_bucket",
                 "osprey_pending_requests", "process_resident_memory_bytes",
                 "process_cpu_seconds_total"]:
        assert name in text, name
    assert 'osprey_inference_request_success_total{model="identity_fp32",version="1"}' in text
    proc = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, proc.stdout


def test_real_prometheus_scrapes_the_series(server, tmp_path):
    prometheus = shutil.which("prometheus")
    if not prometheus:
        unavailable("prometheus not installed (Debian package prometheus)")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n  - job_name: osprey\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{server.metrics_port}']\n")
    proc = subprocess.Popen([prometheus, f"--config.file={config}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def query(q):
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())["data"]["result"]

    try:
        deadline = time.time() + 60
        results = {}
        wanted = {
            "up": 'up{job="osprey"} == 1',
            "success": 'osprey_inference_request_success_total{model="identity_fp32"}',
            "buckets": 'osprey_request_duration_seconds_bucket{model="identity_fp32",le="+Inf"}',
            "pending": 'osprey_pending_requests{model="identity_fp32"}',
        }
        while time.time() < deadline and len(results) < len(wanted):
            infer_some(server, 5)
            for key, q in wanted.items():
                try:
                    if query(q):
                        results[key] = query(q)
                except OSError:
                    pass
            time.sleep(0.5)
        assert set(results) == set(wanted), f"missing {set(wanted) - set(results)}"
        assert float(results["success"][0]["value"][1]) > 0
        p99 = query('histogram_quantile(0.99, sum by (le) (osprey_request_duration_seconds_bucket'
                    '{model="identity_fp32"}))')
        assert p99 and float(p99[0]["value"][1]) > 0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
