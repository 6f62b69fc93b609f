"""`load_client.py --self-test`: the load client against an in-process fake server.

The fake (http.server, HTTP/1.1 keep-alive) answers both TorchServe's /predictions/MODEL and
KServe's /v2/models/MODEL/infer with known logits after a fixed delay, and deliberately
answers every FAIL_EVERY-th request with HTTP 500 and every SHORT_EVERY-th with a too-short
body. The test checks that the client's counts match what the fake served, that bad answers
are counted as errors, that latencies are at least the fake's delay, that the throughput is
the window's good answers over its duration, that both wire formats decode to the same logits,
and that `compare` sees a planted difference.
"""

import json
import math
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import load_client as lc

DELAY_S = 0.004
FAIL_EVERY = 7
SHORT_EVERY = 11


class FakeState:
    def __init__(self, offset: float = 0.0):
        self.lock = threading.Lock()
        self.served = self.failed = self.short = self.bad_input = 0
        self.offset = offset
        self.logits = struct.pack(f"<{lc.CLASSES}f", *(i / 100.0 for i in range(lc.CLASSES)))
        self.shifted = struct.pack(f"<{lc.CLASSES}f", *(i / 100.0 + offset for i in range(lc.CLASSES)))


def make_handler(state: FakeState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = -1  # buffered: headers and body leave in one write, flushed per request

        def log_message(self, *args):
            pass

        def _send(self, status, body, headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.lock:
                state.served += 1
                n = state.served
            time.sleep(DELAY_S)
            kserve = self.path.startswith("/v2/models/")
            tensor = body
            if kserve:
                length = int(self.headers["Inference-Header-Content-Length"])
                meta = json.loads(body[:length])
                tensor = body[length:]
                if meta["inputs"][0]["parameters"]["binary_data_size"] != len(tensor):
                    tensor = b""
            if len(tensor) != 4 * lc.ELEMENTS:
                with state.lock:
                    state.bad_input += 1
                return self._send(400, b"bad input size")
            if n % FAIL_EVERY == 0:
                with state.lock:
                    state.failed += 1
                return self._send(500, b"planted failure")
            logits = state.shifted if kserve else state.logits
            if n % SHORT_EVERY == 0:
                with state.lock:
                    state.short += 1
                logits = logits[:-4]
            if not kserve:
                return self._send(200, logits, [("Content-Type", "application/octet-stream")])
            header = json.dumps({"model_name": "m", "outputs": [
                {"name": "logits", "datatype": "FP32", "shape": [1, lc.CLASSES],
                 "parameters": {"binary_data_size": len(logits)}}]}).encode()
            self._send(200, header + logits, [("Inference-Header-Content-Length", str(len(header))),
                                              ("Content-Type", "application/octet-stream")])
    return Handler


def start_fake(state: FakeState):
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


checks = [0]


def check(failures: list, ok: bool, what: str):
    checks[0] += 1
    print(("  ok   " if ok else "  FAIL ") + what)
    if not ok:
        failures.append(what)


def self_test() -> int:
    failures = []
    check(failures, lc.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50) == 5, "percentile p50 of 1..10 is 5")
    check(failures, lc.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99) == 10, "percentile p99 of 1..10 is 10")
    check(failures, math.isnan(lc.percentile([], 50)), "percentile of nothing is NaN")
    tensor = lc.make_input(0)
    check(failures, len(tensor) == 4 * lc.ELEMENTS and tensor == lc.make_input(0) and tensor != lc.make_input(1),
          "input is 602112 bytes, the same for a seed, different for another")
    for protocol in ("torchserve", "kserve"):
        state = FakeState()
        server, url = start_fake(state)
        r = lc.run_load(url, protocol, "m", 4, 0.3, 1.0, tensor)
        server.shutdown()
        print(f"{protocol}: {json.dumps(r)}")
        check(failures, r["attempts"] == state.served, f"{protocol}: requests sent ({r['attempts']}) == "
              f"requests the fake served ({state.served})")
        check(failures, state.bad_input == 0, f"{protocol}: the fake decoded every request's tensor")
        check(failures, r["attempt_errors"] == state.failed + state.short,
              f"{protocol}: errors over all requests ({r['attempt_errors']}) == planted 500s + short "
              f"bodies ({state.failed} + {state.short})")
        check(failures, r["completed"] > 20 and r["errors"] > 0, f"{protocol}: window holds good answers "
              f"({r['completed']}) and planted errors ({r['errors']})")
        check(failures, r["completed"] + r["errors"] <= r["attempts"], f"{protocol}: window is a subset")
        check(failures, abs(r["throughput"] - r["completed"] / 1.0) < 1e-9, f"{protocol}: throughput is good "
              "answers / duration")
        check(failures, r["p50_ms"] >= DELAY_S * 1000 and r["p50_ms"] <= r["p90_ms"] <= r["p99_ms"],
              f"{protocol}: p50 {r['p50_ms']:.2f} ms >= the fake's {DELAY_S * 1000:.0f} ms delay, p50<=p90<=p99")
        check(failures, "HTTP 500" in (r["first_error"] or "") or "bytes" in (r["first_error"] or ""),
              f"{protocol}: first error names what was wrong: {r['first_error']!r}")
    for offset, agree in ((0.0, True), (0.01, False)):
        state = FakeState(offset)
        state.served = 100  # past the planted-failure counters' first hits: 101, 102 answer well
        server, url = start_fake(state)
        diff = lc.compare(url, "m", url, "m", tensor)
        server.shutdown()
        check(failures, (diff < 1e-3) == agree and abs(diff - offset) < 1e-5,
              f"compare: kserve logits shifted by {offset} give max abs diff {diff:.3g}")
    try:
        lc.Endpoint("https://x", lc.TorchServeProtocol("m"))
        check(failures, False, "an https URL is refused")
    except ValueError as e:
        check(failures, "http://HOST:PORT" in str(e), f"an https URL is refused: {e}")
    print(f"{checks[0] - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0
