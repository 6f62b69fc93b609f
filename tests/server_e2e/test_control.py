"""Model control (explicit mode, repository API) and graceful shutdown."""

import json
import signal
import threading
import time
import urllib.request

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException


def test_explicit_mode_load_and_unload(start_server, demo_repo):
    server = start_server(demo_repo, "--model-control-mode", "explicit", "--load-model", "add_sub")
    client = httpclient.InferenceServerClient(server.http_url)
    assert client.is_model_ready("add_sub")
    assert not client.is_model_ready("identity_fp32")

    client.load_model("identity_fp32")
    assert client.is_model_ready("identity_fp32")
    x = np.full((1, 16), 2.5, np.float32)
    inp = httpclient.InferInput("INPUT0", [1, 16], "FP32")
    inp.set_data_from_numpy(x)
    np.testing.assert_array_equal(client.infer("identity_fp32", [inp]).as_numpy("OUTPUT0"), x)

    client.unload_model("identity_fp32")
    deadline = time.time() + 30
    while client.is_model_ready("identity_fp32") and time.time() < deadline:
        time.sleep(0.1)
    assert not client.is_model_ready("identity_fp32")
    try:
        client.infer("identity_fp32", [inp])
        raise AssertionError("inference on an unloaded model succeeded")
    except InferenceServerException as e:
        assert "identity_fp32" in e.message()

    try:
        client.load_model("no_such_model")
        raise AssertionError("loading a missing model succeeded")
    except InferenceServerException as e:
        assert "no_such_model" in e.message()
    assert client.is_model_ready("add_sub")


def test_sigterm_finishes_in_flight_requests(start_server, demo_repo):
    server = start_server(demo_repo)
    client = httpclient.InferenceServerClient(server.http_url, concurrency=4)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    results, errors = [], []

    def one():
        try:
            inp = httpclient.InferInput("input", list(x.shape), "FP32")
            inp.set_data_from_numpy(x, binary_data=True)
            results.append(httpclient.InferenceServerClient(server.http_url).infer(
                "mobilenetv2", [inp]).as_numpy("logits"))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.05)  # requests are in flight (MobileNetV2 takes tens of ms each)
    server.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(timeout=60)
    assert server.proc.wait(timeout=60) == 0, server.output()[-3000:]
    # Requests accepted before SIGTERM complete; any refused afterwards get a clean error.
    assert results, errors
    for r in results:
        assert r.shape == (1, 1000)
    for e in errors:
        assert "refused" in str(e).lower() or "unavailable" in str(e).lower() or \
            "connection" in str(e).lower(), e
