"""End-to-end: `osprey serve` on a generated demo repository (add_sub), then `osprey perf`
against it over HTTP and gRPC (concurrency 1:4:3) and a short request-rate run. Checks exit
codes, zero errors, the perf_analyzer CSV header and rows, and the JSON fields. Never asserts
on timing. Usage: perf_e2e_test.py OSPREY_BIN (exit 77 = skipped)."""

import csv
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HEADER = ("Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
          "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,"
          "p99 latency")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc, port, log):
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"osprey serve exited with {proc.returncode}:\n{Path(log).read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("osprey serve not ready after 120 s")


def perf(osprey, out, *args):
    cmd = [str(osprey), "perf", "-m", "add_sub", "--out", str(out), "-p", "300", "-r", "6", *args]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(p.stdout)
    assert p.returncode == 0, f"{cmd} exited {p.returncode}"
    return p.stdout


def check_reports(out, first_column, values):
    lines = (out / "perf.csv").read_text().splitlines()
    assert lines[0] == f"{first_column},{HEADER}", lines[0]
    rows = list(csv.reader(lines[1:]))
    assert sorted(float(r[0]) for r in rows) == sorted(values), rows
    for r in rows:
        assert len(r) == 1 + len(HEADER.split(",")) and float(r[1]) > 0, r
    doc = json.loads((out / "perf.json").read_text())
    assert doc["settings"]["model"] == "add_sub"
    assert len(doc["steps"]) == len(values)
    for s in doc["steps"]:
        assert s["failed"] == 0 and s["errors"] == {}, s
        assert s["completed"] > 0
        for k in ("p50", "p90", "p95", "p99", "mean"):
            assert s["latency_ms"][k] > 0
        assert s["breakdown_us"]["server_stats"] is True, s
        assert s["server"]["success_count"] > 0
        assert s["breakdown_us"]["server_compute_infer"] > 0
    return doc


def main():
    osprey = Path(sys.argv[1])
    if not osprey.is_file():
        print(f"skip: no {osprey}")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        repo = tmp / "repo"
        subprocess.run([sys.executable, str(REPO / "tools/serve/make_demo_repository.py"), "--out", str(repo),
                        "--skip-zoo"], check=True)
        http_port, grpc_port, metrics_port = free_port(), free_port(), free_port()
        log = tmp / "serve.log"
        with open(log, "w") as logf:
            server = subprocess.Popen([str(osprey), "serve", "--model-repository", str(repo), "--http-port",
                                       str(http_port), "--grpc-port", str(grpc_port), "--metrics-port",
                                       str(metrics_port)], stdout=logf, stderr=subprocess.STDOUT)
            try:
                wait_ready(server, http_port, log)
                perf(osprey, tmp / "http", "-u", f"127.0.0.1:{http_port}", "--concurrency-range", "1:4:3")
                check_reports(tmp / "http", "Concurrency", [1, 4])
                perf(osprey, tmp / "grpc", "-u", f"127.0.0.1:{grpc_port}", "-i", "grpc", "--concurrency-range",
                     "1:4:3")
                check_reports(tmp / "grpc", "Concurrency", [1, 4])
                perf(osprey, tmp / "json", "-u", f"127.0.0.1:{http_port}", "--http-json", "--duration", "0.5")
                check_reports(tmp / "json", "Concurrency", [1])
                text = perf(osprey, tmp / "rate", "-u", f"127.0.0.1:{http_port}", "--request-rate-range", "20",
                            "--distribution", "constant", "--duration", "1")
                doc = check_reports(tmp / "rate", "Request Rate", [20])
                assert doc["steps"][0]["scheduled_requests"] > 0
                assert "Request rate 20/s" in text
                # Errors are clear and quick: unknown model, nothing listening.
                bad = subprocess.run([str(osprey), "perf", "-m", "nope", "-u", f"127.0.0.1:{http_port}"],
                                     capture_output=True, text=True, timeout=60)
                assert bad.returncode == 1 and "nope" in bad.stderr, bad.stderr
                refused = subprocess.run([str(osprey), "perf", "-m", "add_sub", "-u", f"127.0.0.1:{free_port()}"],
                                         capture_output=True, text=True, timeout=60)
                assert refused.returncode == 1 and "connect" in refused.stderr, refused.stderr
            finally:
                server.terminate()
                server.wait(timeout=60)
    print("perf e2e: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
