#!/usr/bin/env python3
"""Closed-loop HTTP load for MobileNetV2 on TorchServe and on `osprey serve` (standard library only).

    load_client.py run --protocol torchserve --url http://127.0.0.1:8080 --model mobilenetv2 \
        --concurrency 16 [--warmup 3] [--duration 15] [--label NAME]
    load_client.py run --protocol kserve --url http://127.0.0.1:8000 --model mobilenetv2 ...
    load_client.py compare --torchserve URL --kserve URL [--torchserve-model M] [--kserve-model M]
    load_client.py summarize FILE.jsonl ...
    load_client.py --self-test

Every request carries the same input: the float32 tensor [1,3,224,224] drawn from
random.Random(seed).uniform(-1, 1) in C order, little-endian (seed 0 unless --seed).

- torchserve: POST /predictions/MODEL, the 602,112 raw bytes (application/octet-stream); the
  answer must be 200 with 4,000 bytes (float32 logits [1,1000]).
- kserve: POST /v2/models/MODEL/infer with the binary tensor extension: a JSON header naming
  input "input" (FP32 [1,3,224,224], binary_data_size) and asking output "logits" as binary,
  then the raw tensor; Inference-Header-Content-Length gives the JSON part's length. The answer
  must be 200 with a 4,000-byte binary "logits".

Anything else (other status, other size, socket error) is an error. `run` starts --concurrency
threads, each with its own keep-alive connection, each sending its next request as soon as the
previous one is answered. Requests answered in the first --warmup seconds are not counted; the
window is the next --duration seconds: throughput is the good answers completed in the window /
--duration, latencies (p50/p90/p99) are those answers' send-to-answer times. `run` prints one
JSON line. `summarize` groups run lines by (label, concurrency) and prints the median of each
figure as a Markdown table.
"""

import argparse
import http.client
import json
import random
import socket
import statistics
import struct
import sys
import threading
import time
from array import array
from urllib.parse import urlsplit

SHAPE = (1, 3, 224, 224)
ELEMENTS = 3 * 224 * 224
CLASSES = 1000
INPUT_NAME, OUTPUT_NAME = "input", "logits"


class ResponseError(Exception):
    """An answer that is not the expected logits."""


def make_input(seed: int = 0) -> bytes:
    rng = random.Random(seed)
    values = array("f", (rng.uniform(-1.0, 1.0) for _ in range(ELEMENTS)))
    if sys.byteorder != "little":
        values.byteswap()
    return values.tobytes()


def decode_logits(raw: bytes) -> list:
    if len(raw) != 4 * CLASSES:
        raise ResponseError(f"logits are {len(raw)} bytes, expected {4 * CLASSES}")
    return list(struct.unpack(f"<{CLASSES}f", raw))


class TorchServeProtocol:
    def __init__(self, model: str):
        self.path = f"/predictions/{model}"

    def request(self, tensor: bytes):
        return self.path, tensor, {"Content-Type": "application/octet-stream"}

    def logits(self, status: int, headers, body: bytes) -> bytes:
        if status != 200:
            raise ResponseError(f"HTTP {status}: {body[:200]!r}")
        if len(body) != 4 * CLASSES:
            raise ResponseError(f"answer is {len(body)} bytes, expected {4 * CLASSES} (raw logits)")
        return body


class KServeProtocol:
    def __init__(self, model: str):
        self.path = f"/v2/models/{model}/infer"

    def request(self, tensor: bytes):
        header = json.dumps({
            "inputs": [{"name": INPUT_NAME, "shape": list(SHAPE), "datatype": "FP32",
                        "parameters": {"binary_data_size": len(tensor)}}],
            "outputs": [{"name": OUTPUT_NAME, "parameters": {"binary_data": True}}],
        }).encode()
        return self.path, header + tensor, {"Content-Type": "application/octet-stream",
                                             "Inference-Header-Content-Length": str(len(header))}

    def logits(self, status: int, headers, body: bytes) -> bytes:
        if status != 200:
            raise ResponseError(f"HTTP {status}: {body[:200]!r}")
        length = headers.get("Inference-Header-Content-Length")
        if length is None or not length.isdigit() or int(length) > len(body):
            raise ResponseError(f"bad or missing Inference-Header-Content-Length: {length!r}")
        meta = json.loads(body[:int(length)])
        outputs = [o for o in meta.get("outputs", []) if o.get("name") == OUTPUT_NAME]
        if len(outputs) != 1:
            raise ResponseError(f"answer has no single output {OUTPUT_NAME!r}: {meta}")
        size = outputs[0].get("parameters", {}).get("binary_data_size")
        raw = body[int(length):]
        if size != 4 * CLASSES or len(raw) != size:
            raise ResponseError(f"binary logits are {len(raw)} bytes (binary_data_size {size}), "
                                f"expected {4 * CLASSES}")
        return raw


PROTOCOLS = {"torchserve": TorchServeProtocol, "kserve": KServeProtocol}


class Endpoint:
    """One keep-alive connection to URL; reconnects after a socket error."""

    def __init__(self, url: str, protocol, timeout_s: float = 120.0):
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"--url must be http://HOST:PORT, got {url!r}")
        self.host, self.port, self.timeout_s = parts.hostname, parts.port or 80, timeout_s
        self.protocol, self.conn = protocol, None

    def infer(self, tensor: bytes) -> bytes:
        path, body, headers = self.protocol.request(tensor)
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
                self.conn.connect()
                self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn.request("POST", path, body=body, headers=headers)
            response = self.conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise ResponseError(f"{type(e).__name__}: {e}") from e
        return self.protocol.logits(response.status, response.headers, payload)

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def percentile(sorted_values: list, q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an ascending list; NaN when empty."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


def run_load(url, protocol_name, model, concurrency, warmup_s, duration_s, tensor, clock=time.monotonic):
    """Closed-loop load; returns the window's figures plus every request's count (`attempts`)."""
    protocol = PROTOCOLS[protocol_name](model)
    start = clock()
    window_start, window_end = start + warmup_s, start + warmup_s + duration_s
    records, lock = [], threading.Lock()

    def worker():
        endpoint, mine = Endpoint(url, protocol), []
        while clock() < window_end:
            sent = clock()
            try:
                endpoint.infer(tensor)
                error = None
            except ResponseError as e:
                error = str(e)
            mine.append((sent, clock(), error))
        endpoint.close()
        with lock:
            records.extend(mine)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    window = [r for r in records if window_start <= r[1] <= window_end]
    good = sorted((done - sent) * 1000.0 for sent, done, error in window if error is None)
    errors = [error for _, _, error in window if error is not None]
    return {
        "protocol": protocol_name, "model": model, "concurrency": concurrency,
        "warmup_s": warmup_s, "duration_s": duration_s, "attempts": len(records),
        "attempt_errors": sum(1 for r in records if r[2] is not None),
        "completed": len(good), "errors": len(errors), "first_error": errors[0] if errors else None,
        "throughput": len(good) / duration_s,
        "p50_ms": percentile(good, 50), "p90_ms": percentile(good, 90), "p99_ms": percentile(good, 99),
    }


def compare(ts_url, ts_model, ks_url, ks_model, tensor) -> float:
    """Max abs difference of the two servers' logits for the same input."""
    a = decode_logits(Endpoint(ts_url, TorchServeProtocol(ts_model)).infer(tensor))
    b = decode_logits(Endpoint(ks_url, KServeProtocol(ks_model)).infer(tensor))
    return max(abs(x - y) for x, y in zip(a, b))


def summarize(lines: list) -> str:
    groups = {}
    for line in lines:
        groups.setdefault((line["label"], line["concurrency"]), []).append(line)
    rows = ["| server | concurrency | runs | throughput (infer/s) | p50 ms | p90 ms | p99 ms | errors |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (label, conc), runs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med = {k: statistics.median(r[k] for r in runs) for k in ("throughput", "p50_ms", "p90_ms", "p99_ms")}
        rows.append(f"| {label} | {conc} | {len(runs)} | {med['throughput']:.1f} | {med['p50_ms']:.1f} | "
                    f"{med['p90_ms']:.1f} | {med['p99_ms']:.1f} | {sum(r['errors'] for r in runs)} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv == ["--self-test"]:
        from load_client_selftest import self_test
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="closed-loop load against one server")
    r.add_argument("--protocol", choices=sorted(PROTOCOLS), required=True)
    r.add_argument("--url", required=True, help="http://HOST:PORT of the server's inference API")
    r.add_argument("--model", required=True)
    r.add_argument("--concurrency", type=int, required=True)
    r.add_argument("--warmup", type=float, default=3.0, help="seconds not counted (default 3)")
    r.add_argument("--duration", type=float, default=15.0, help="measured seconds (default 15)")
    r.add_argument("--label", default=None, help="name of this server in the summary")
    r.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("compare", help="max abs difference of the two servers' logits")
    c.add_argument("--torchserve", required=True)
    c.add_argument("--torchserve-model", default="mobilenetv2")
    c.add_argument("--kserve", required=True)
    c.add_argument("--kserve-model", default="mobilenetv2")
    c.add_argument("--tolerance", type=float, default=1e-3)
    c.add_argument("--seed", type=int, default=0)
    s = sub.add_parser("summarize", help="median table of run lines")
    s.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    if args.command == "run":
        if args.concurrency < 1 or args.concurrency > 1024:
            ap.error(f"--concurrency must be 1..1024, got {args.concurrency}")
        if args.duration <= 0 or args.warmup < 0:
            ap.error("--duration must be > 0 and --warmup >= 0")
        result = run_load(args.url, args.protocol, args.model, args.concurrency, args.warmup,
                          args.duration, make_input(args.seed))
        result["label"] = args.label or args.protocol
        print(json.dumps(result))
        return 0
    if args.command == "compare":
        try:
            diff = compare(args.torchserve, args.torchserve_model, args.kserve, args.kserve_model,
                           make_input(args.seed))
        except ResponseError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        verdict = "agree" if diff < args.tolerance else "DISAGREE"
        print(f"max abs diff of logits (torchserve vs osprey): {diff:.3g} ({verdict}, tolerance {args.tolerance:g})")
        return 0 if diff < args.tolerance else 1
    lines = []
    for name in args.files:
        with open(name) as f:
            lines += [json.loads(line) for line in f if line.strip()]
    print(summarize(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
