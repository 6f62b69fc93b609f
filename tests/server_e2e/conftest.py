"""Fixtures for the end-to-end server tests: a real `osprey serve` process, real clients.

Environment:
  OSPREY_BIN            the CLI (default <repo>/build/cli/osprey)
  OSPREY_ZOO_DIR        the zoo (default <repo>/models; MobileNetV2 is generated when missing)
  OSPREY_REQUIRE_ZOO=1  a missing CLI/zoo/client fails the tests instead of skipping them (CI)
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tools" / "serve"))

import make_demo_repository  # noqa: E402
from serve_util import free_port, unavailable  # noqa: E402




@pytest.fixture(scope="session")
def osprey_bin():
    path = Path(os.environ.get("OSPREY_BIN", REPO / "build" / "cli" / "osprey"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"Osprey CLI not found at {path} (build it, or set OSPREY_BIN)")
    return path


@pytest.fixture(scope="session")
def zoo_dir():
    zoo = Path(os.environ.get("OSPREY_ZOO_DIR", REPO / "models"))
    if not (zoo / "mobilenetv2.onnx").is_file():
        cmd = [sys.executable, str(REPO / "tools" / "zoo" / "make_zoo.py"), "--out", str(zoo),
               "--only", "mobilenetv2"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            unavailable(f"could not generate MobileNetV2:\n{proc.stdout[-2000:]}")
    return zoo


@pytest.fixture(scope="session")
def demo_repo(tmp_path_factory, zoo_dir):
    out = tmp_path_factory.mktemp("repo")
    make_demo_repository.main_with(out, zoo_dir)
    return out


class ServerProcess:
    """`osprey serve` on free ports; stop() sends SIGTERM and returns the exit code."""

    def __init__(self, osprey_bin, repo, log_path, extra_args=()):
        self.http_port, self.grpc_port, self.metrics_port = free_port(), free_port(), free_port()
        self.log_path = log_path
        self.args = [str(osprey_bin), "serve", "--model-repository", str(repo),
                     "--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port),
                     "--metrics-port", str(self.metrics_port), *extra_args]
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def http_url(self):
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self):
        return f"127.0.0.1:{self.grpc_port}"

    def output(self):
        self.log.flush()
        return Path(self.log_path).read_text(errors="replace")

    def get(self, path, port=None):
        url = f"http://127.0.0.1:{port or self.http_port}/{path.lstrip('/')}"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def wait_ready(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"osprey serve exited with {self.proc.returncode}:\n{self.output()[-3000:]}")
            try:
                if self.get("v2/health/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        pytest.fail(f"osprey serve not ready after {timeout} s:\n{self.output()[-3000:]}")

    def metrics(self):
        status, body = self.get("metrics", port=self.metrics_port)
        assert status == 200, body
        return body.decode()

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"osprey serve ignored SIGTERM for {timeout} s:\n{self.output()[-3000:]}")
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def start_server(osprey_bin, tmp_path):
    started = []

    def start(repo, *extra_args, wait=True):
        server = ServerProcess(osprey_bin, repo, tmp_path / f"serve{len(started)}.log", extra_args)
        started.append(server)
        if wait:
            server.wait_ready()
        return server

    yield start
    for server in started:
        code = server.stop()
        assert code == 0, f"osprey serve exited with {code} after SIGTERM:\n{server.output()[-3000:]}"


@pytest.fixture(scope="module")
def server(osprey_bin, demo_repo, tmp_path_factory):
    """One server over the demo repository shared by a test module; stops cleanly at the end."""
    s = ServerProcess(osprey_bin, demo_repo, tmp_path_factory.mktemp("log") / "serve.log")
    s.wait_ready()
    yield s
    code = s.stop()
    assert code == 0, f"osprey serve exited with {code} after SIGTERM:\n{s.output()[-3000:]}"


@pytest.fixture(scope="session")
def perf_analyzer():
    path = shutil.which("perf_analyzer", path=str(VENV_BIN)) or shutil.which("perf_analyzer")
    if not path:
        unavailable("perf_analyzer not installed (scripts/install_perf_analyzer.sh)")
    return path
