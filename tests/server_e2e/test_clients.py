"""Triton's own Python clients (HTTP JSON, HTTP binary, gRPC) against `osprey serve`."""

import json
import subprocess
import urllib.request

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException


def _add_sub_inputs(module, batch=3, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, 16)).astype(np.float32)
    b = rng.standard_normal((batch, 16)).astype(np.float32)
    inputs = [module.InferInput("INPUT0", list(a.shape), "FP32"),
              module.InferInput("INPUT1", list(b.shape), "FP32")]
    if module is httpclient:
        inputs[0].set_data_from_numpy(a, binary_data=binary)
        inputs[1].set_data_from_numpy(b, binary_data=binary)
    else:
        inputs[0].set_data_from_numpy(a)
        inputs[1].set_data_from_numpy(b)
    return a, b, inputs


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_http_infer_add_sub(server, binary):
    client = httpclient.InferenceServerClient(server.http_url)
    a, b, inputs = _add_sub_inputs(httpclient, binary=binary)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary),
               httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary)]
    result = client.infer("add_sub", inputs, outputs=outputs, request_id="req-7")
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.get_response()["id"] == "req-7"
    assert result.get_response()["model_name"] == "add_sub"


def test_grpc_infer_add_sub(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    a, b, inputs = _add_sub_inputs(grpcclient, batch=5, seed=1)
    result = client.infer("add_sub", inputs, request_id="g-1")
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.get_response().id == "g-1"


def test_grpc_stream_infer(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    results = []
    client.start_stream(callback=lambda result, error: results.append((result, error)))
    expected = []
    for i in range(4):
        a, b, inputs = _add_sub_inputs(grpcclient, batch=1, seed=10 + i)
        expected.append(a + b)
        client.async_stream_infer("add_sub", inputs, request_id=str(i))
    client.stop_stream()  # waits for the responses
    assert len(results) == 4
    by_id = {r.get_response().id: r for r, e in results if e is None}
    assert sorted(by_id) == ["0", "1", "2", "3"], [e for _, e in results]
    for i, want in enumerate(expected):
        np.testing.assert_array_equal(by_id[str(i)].as_numpy("OUTPUT0"), want)


def _engine_reference(osprey_bin, model_path, x, tmp_path):
    np.save(tmp_path / "input.npy", x)
    subprocess.run([str(osprey_bin), "run", str(model_path), "-i", f"input={tmp_path / 'input.npy'}",
                    "-o", str(tmp_path / "out"), "-t", "1"], check=True, capture_output=True)
    return np.load(tmp_path / "out" / "logits.npy")


def test_mobilenet_http_and_grpc_match_in_process_engine(server, osprey_bin, demo_repo, tmp_path):
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    want = _engine_reference(osprey_bin, demo_repo / "mobilenetv2" / "1" / "model.onnx", x, tmp_path)

    http = httpclient.InferenceServerClient(server.http_url)
    inp = httpclient.InferInput("input", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=True)
    got_http = http.infer("mobilenetv2", [inp]).as_numpy("logits")

    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    ginp = grpcclient.InferInput("input", list(x.shape), "FP32")
    ginp.set_data_from_numpy(x)
    got_grpc = grpc.infer("mobilenetv2", [ginp]).as_numpy("logits")

    for got in (got_http, got_grpc):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_metadata_config_index_and_stats(server):
    http = httpclient.InferenceServerClient(server.http_url)
    assert http.is_server_live() and http.is_server_ready()
    assert http.is_model_ready("add_sub")
    meta = http.get_server_metadata()
    assert meta["name"] and "extensions" in meta
    model = http.get_model_metadata("add_sub")
    assert [i["name"] for i in model["inputs"]] == ["INPUT0", "INPUT1"]
    assert model["inputs"][0]["datatype"] == "FP32"
    assert model["inputs"][0]["shape"] == [-1, 16]
    config = http.get_model_config("mobilenetv2")
    assert config["max_batch_size"] == 8
    assert config["dynamic_batching"]["preferred_batch_size"] == [4, 8]
    index = {m["name"]: m for m in http.get_model_repository_index()}
    assert {"add_sub", "identity_fp32", "mobilenetv2"} <= set(index)
    assert index["add_sub"]["state"] == "READY"

    _, _, inputs = _add_sub_inputs(httpclient)
    http.infer("add_sub", inputs)
    stats = http.get_inference_statistics("add_sub")["model_stats"]
    assert stats[0]["name"] == "add_sub"
    assert int(stats[0]["inference_stats"]["success"]["count"]) >= 1

    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    assert grpc.is_server_live() and grpc.is_server_ready() and grpc.is_model_ready("add_sub")
    gconfig = grpc.get_model_config("mobilenetv2", as_json=True)["config"]
    assert gconfig["max_batch_size"] == 8
    gmeta = grpc.get_model_metadata("add_sub", as_json=True)
    assert [o["name"] for o in gmeta["outputs"]] == ["OUTPUT0", "OUTPUT1"]
    gstats = grpc.get_inference_statistics("add_sub", as_json=True)
    assert int(gstats["model_stats"][0]["inference_stats"]["success"]["count"]) >= 1


def _post(server, path, body, headers=None):
    req = urllib.request.Request(f"http://{server.http_url}/{path}", data=body, method="POST",
                                 headers=headers or {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_http_errors_are_4xx_with_a_message(server):
    good = {"inputs": [{"name": n, "datatype": "FP32", "shape": [1, 16], "data": [0.5] * 16}
                       for n in ("INPUT0", "INPUT1")]}
    status, body = _post(server, "v2/models/add_sub/infer", json.dumps(good).encode())
    assert status == 200, body

    cases = {
        "v2/models/nope/infer": (json.dumps(good).encode(), 404, "nope"),
        "v2/models/add_sub/versions/9/infer": (json.dumps(good).encode(), 404, "9"),
    }
    bad_json = b'{"inputs": [ {"name": "INPUT0", '
    cases["v2/models/add_sub/infer#malformed"] = (bad_json, 400, "")
    wrong_shape = json.loads(json.dumps(good))
    wrong_shape["inputs"][0]["shape"] = [1, 15]
    cases["v2/models/add_sub/infer#shape"] = (json.dumps(wrong_shape).encode(), 400, "INPUT0")
    wrong_name = json.loads(json.dumps(good))
    wrong_name["inputs"][1]["name"] = "INPUT9"
    cases["v2/models/add_sub/infer#name"] = (json.dumps(wrong_name).encode(), 400, "INPUT9")
    wrong_type = json.loads(json.dumps(good))
    wrong_type["inputs"][0]["datatype"] = "INT32"
    wrong_type["inputs"][0]["data"] = [1] * 16
    cases["v2/models/add_sub/infer#dtype"] = (json.dumps(wrong_type).encode(), 400, "INPUT0")
    short = json.loads(json.dumps(good))
    short["inputs"][0]["data"] = [0.5] * 3
    cases["v2/models/add_sub/infer#count"] = (json.dumps(short).encode(), 400, "INPUT0")

    for key, (body, want_status, must_mention) in cases.items():
        status, answer = _post(server, key.split("#")[0], body)
        assert status == want_status, (key, status, answer)
        message = json.loads(answer)["error"]
        assert must_mention in message, (key, message)

    # A truncated binary payload (header says 64 bytes of tensor data, 10 follow).
    header = json.dumps({"inputs": [
        {"name": "INPUT0", "datatype": "FP32", "shape": [1, 16], "parameters": {"binary_data_size": 64}},
        {"name": "INPUT1", "datatype": "FP32", "shape": [1, 16], "parameters": {"binary_data_size": 64}},
    ]}).encode()
    status, answer = _post(server, "v2/models/add_sub/infer", header + b"\0" * 10,
                           {"Inference-Header-Content-Length": str(len(header)),
                            "Content-Type": "application/octet-stream"})
    assert status == 400, answer
    assert json.loads(answer)["error"]

    # Nothing else was disturbed: the server still answers correctly.
    status, body = _post(server, "v2/models/add_sub/infer", json.dumps(good).encode())
    assert status == 200 and json.loads(body)["outputs"][0]["data"] == [1.0] * 16


def test_grpc_errors_map_to_status_codes(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    _, _, inputs = _add_sub_inputs(grpcclient)
    with pytest.raises(InferenceServerException) as e:
        client.infer("nope", inputs)
    assert "NOT_FOUND" in str(e.value.status()) and "nope" in e.value.message()
    bad = [grpcclient.InferInput("INPUT0", [1, 15], "FP32"), grpcclient.InferInput("INPUT1", [1, 15], "FP32")]
    for i in bad:
        i.set_data_from_numpy(np.zeros((1, 15), np.float32))
    with pytest.raises(InferenceServerException) as e:
        client.infer("add_sub", bad)
    assert "INVALID_ARGUMENT" in str(e.value.status())
