#!/usr/bin/env python3
"""Sample requests to a running `osprey serve`, with Triton's own Python clients.

    .venv/bin/python tools/serve/sample_request.py [--http localhost:8000] [--grpc localhost:8001]

Sends add_sub over HTTP (binary tensors) and gRPC, MobileNetV2 over HTTP when the repository
has it, and prints what came back.
"""

import argparse
import sys

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient


def add_sub(module, url):
    client = module.InferenceServerClient(url)
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    b = np.ones((1, 16), dtype=np.float32)
    inputs = [module.InferInput("INPUT0", [1, 16], "FP32"), module.InferInput("INPUT1", [1, 16], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    result = client.infer("add_sub", inputs)
    return result.as_numpy("OUTPUT0"), result.as_numpy("OUTPUT1")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--http", default="localhost:8000")
    ap.add_argument("--grpc", default="localhost:8001")
    args = ap.parse_args()

    total, diff = add_sub(httpclient, args.http)
    print(f"HTTP add_sub: INPUT0+INPUT1 = {total[0, :6]} ...  INPUT0-INPUT1 = {diff[0, :6]} ...")
    total, diff = add_sub(grpcclient, args.grpc)
    print(f"gRPC add_sub: INPUT0+INPUT1 = {total[0, :6]} ...  INPUT0-INPUT1 = {diff[0, :6]} ...")

    http = httpclient.InferenceServerClient(args.http)
    if http.is_model_ready("mobilenetv2"):
        x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        inp = httpclient.InferInput("input", list(x.shape), "FP32")
        inp.set_data_from_numpy(x, binary_data=True)
        logits = http.infer("mobilenetv2", [inp]).as_numpy("logits")[0]
        top = np.argsort(-logits)[:5]
        print("HTTP mobilenetv2 (random input): top-5 classes",
              ", ".join(f"{i} ({logits[i]:.2f})" for i in top))
    stats = http.get_inference_statistics("add_sub")["model_stats"][0]
    print(f"add_sub statistics: {stats['inference_count']} inferences in "
          f"{stats['execution_count']} executions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
