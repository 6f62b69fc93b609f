"""Load with a config override (Triton's load parameter "config") through tritonclient, HTTP and
gRPC, and grpc.health.v1.Health/Watch following loads and unloads as they happen."""

import base64
import json
import queue
import threading
import time
import urllib.request

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import grpc  # noqa: E402 - after tritonclient.grpc, which needs it too
import make_demo_repository as demo

IDENTITY_OVERRIDE = {
    "max_batch_size": 2,
    "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [16]}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [16]}],
    "dynamic_batching": {"max_queue_delay_microseconds": 50},
}


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny_repo")
    demo.write_model(out, "identity_fp32", demo.IDENTITY_CONFIG, demo.identity_model())
    demo.write_model(out, "add_sub", demo.ADD_SUB_CONFIG, demo.add_sub_model())
    return out


def explicit(start_server, repo):
    return start_server(repo, "--model-control-mode", "explicit", "--load-model", "identity_fp32")


def infer_rows(client, module, rows):
    x = np.arange(rows * 16, dtype=np.float32).reshape(rows, 16)
    inp = module.InferInput("INPUT0", [rows, 16], "FP32")
    inp.set_data_from_numpy(x)
    np.testing.assert_array_equal(client.infer("identity_fp32", [inp]).as_numpy("OUTPUT0"), x)


def post(server, path, body):
    req = urllib.request.Request(f"http://{server.http_url}/{path}", data=body.encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_http_override_then_back_to_the_file(start_server, tiny_repo):
    server = explicit(start_server, tiny_repo)
    file_before = (tiny_repo / "identity_fp32" / "config.pbtxt").read_text()
    client = httpclient.InferenceServerClient(server.http_url)
    assert client.get_model_config("identity_fp32")["max_batch_size"] == 8

    client.load_model("identity_fp32", config=json.dumps(IDENTITY_OVERRIDE))
    cfg = client.get_model_config("identity_fp32")
    assert cfg["max_batch_size"] == 2
    assert cfg["dynamic_batching"]["max_queue_delay_microseconds"] == "50" or \
        cfg["dynamic_batching"]["max_queue_delay_microseconds"] == 50
    infer_rows(client, httpclient, 2)
    with pytest.raises(InferenceServerException, match="identity_fp32"):
        infer_rows(client, httpclient, 3)  # over the override's max_batch_size
    assert (tiny_repo / "identity_fp32" / "config.pbtxt").read_text() == file_before

    client.load_model("identity_fp32")  # no parameter: config.pbtxt again
    assert client.get_model_config("identity_fp32")["max_batch_size"] == 8
    infer_rows(client, httpclient, 3)


def test_grpc_override_and_json_field_names(start_server, tiny_repo):
    server = explicit(start_server, tiny_repo)
    client = grpcclient.InferenceServerClient(server.grpc_url)
    # JSON (lowerCamel) names are accepted as well as proto names; inputs come from the model.
    client.load_model("add_sub", config=json.dumps({"maxBatchSize": 4}))
    cfg = client.get_model_config("add_sub", as_json=True)["config"]
    assert cfg["max_batch_size"] == 4
    assert sorted(i["name"] for i in cfg["input"]) == ["INPUT0", "INPUT1"]
    assert "dynamic_batching" not in cfg  # the file's dynamic_batching is not merged in

    client.load_model("identity_fp32", config=json.dumps(IDENTITY_OVERRIDE))
    assert client.get_model_config("identity_fp32", as_json=True)["config"]["max_batch_size"] == 2
    infer_rows(client, grpcclient, 2)
    client.load_model("identity_fp32")
    assert client.get_model_config("identity_fp32", as_json=True)["config"]["max_batch_size"] == 8


def test_bad_overrides_are_refused_and_the_model_keeps_serving(start_server, tiny_repo):
    server = explicit(start_server, tiny_repo)
    http = httpclient.InferenceServerClient(server.http_url)
    rpc = grpcclient.InferenceServerClient(server.grpc_url)
    cases = [
        (json.dumps({"max_batch_size": 2, "colour": "red"}), "colour"),
        ("{not json", "not a valid model configuration"),
        (json.dumps({"name": "someone_else"}), "does not match"),
        (json.dumps({"max_batch_size": -3}), "negative"),
        # Valid on its own, but not this model: found when the version loads.
        (json.dumps({"input": [{"name": "INPUT0", "data_type": "TYPE_INT8", "dims": [16]}]}),
         "INPUT0"),
    ]
    for config, expected in cases:
        with pytest.raises(InferenceServerException, match=expected):
            http.load_model("identity_fp32", config=config)
        with pytest.raises(InferenceServerException, match=expected) as e:
            rpc.load_model("identity_fp32", config=config)
        assert e.value.status() == "StatusCode.INVALID_ARGUMENT", e.value
        assert http.is_model_ready("identity_fp32")
        assert http.get_model_config("identity_fp32")["max_batch_size"] == 8
        infer_rows(http, httpclient, 3)

    status, body = post(server, "v2/repository/models/identity_fp32/load",
                        json.dumps({"parameters": {"colour": "red"}}))
    assert status == 400 and "unknown load parameter 'colour'" in body, body
    status, body = post(server, "v2/repository/models/identity_fp32/load",
                        json.dumps({"parameters": {"config": " " * (1 << 20) + "{}"}}))
    assert status == 400 and "over the limit" in body, body
    assert http.is_server_ready()


def test_override_needs_explicit_mode(start_server, tiny_repo):
    server = start_server(tiny_repo)  # model control mode "none"
    client = httpclient.InferenceServerClient(server.http_url)
    with pytest.raises(InferenceServerException, match="explicit"):
        client.load_model("identity_fp32", config=json.dumps({"max_batch_size": 2}))
    assert client.get_model_config("identity_fp32")["max_batch_size"] == 8


def test_model_files_sent_with_the_load(start_server, tiny_repo):
    server = explicit(start_server, tiny_repo)
    rpc = grpcclient.InferenceServerClient(server.grpc_url)
    http = httpclient.InferenceServerClient(server.http_url)
    model = (tiny_repo / "identity_fp32" / "1" / "model.onnx").read_bytes()
    # gRPC, tritonclient's own call: the files form the model directory (version 7 only).
    rpc.load_model("identity_fp32", config=json.dumps({"max_batch_size": 4}),
                   files={"file:7/model.onnx": model})
    assert http.is_model_ready("identity_fp32", "7")
    assert not http.is_model_ready("identity_fp32", "1")
    assert http.get_model_config("identity_fp32")["max_batch_size"] == 4
    infer_rows(http, httpclient, 4)
    assert not (tiny_repo / "identity_fp32" / "7").exists()

    # HTTP: base64 strings (tritonclient's HTTP load_model cannot encode files: it puts bytes
    # into json.dumps, so the body is written here as Triton's protocol describes it).
    body = {"parameters": {"config": json.dumps({"max_batch_size": 3}),
                           "file:5/model.onnx": base64.b64encode(model).decode()}}
    status, text = post(server, "v2/repository/models/identity_fp32/load", json.dumps(body))
    assert status == 200, text
    assert http.is_model_ready("identity_fp32", "5")
    assert not http.is_model_ready("identity_fp32", "7")

    for params, expected in [
        ({"config": "{}", "file:../../evil/model.onnx": "TWFu"}, "the path must be"),
        ({"config": "{}", "file:1/model.onnx": "not base64!"}, "base64"),
        ({"file:1/model.onnx": "TWFu"}, "load parameters need the"),
        ({"config": "{}", "file:1/model.onnx": "TWFu"}, "identity_fp32"),  # not an ONNX model
    ]:
        status, text = post(server, "v2/repository/models/identity_fp32/load",
                            json.dumps({"parameters": params}))
        assert status == 400 and expected in text, (params, status, text)
        assert http.is_model_ready("identity_fp32", "5")
    with pytest.raises(InferenceServerException, match="the path must be") as e:
        rpc.load_model("identity_fp32", config="{}", files={"file:1/../../x": model})
    assert e.value.status() == "StatusCode.INVALID_ARGUMENT"

    http.load_model("identity_fp32")  # back to the repository
    assert http.is_model_ready("identity_fp32", "1")
    assert not http.is_model_ready("identity_fp32", "5")
    assert http.get_model_config("identity_fp32")["max_batch_size"] == 8


SERVING, NOT_SERVING = 1, 2


def health_watch(server):
    """Reads grpc.health.v1 Watch("") on a thread; yields (status, arrival time) through a queue.
    The messages are tiny protobufs: field 1 (varint) is the status."""
    channel = grpc.insecure_channel(server.grpc_url)
    call = channel.unary_stream("/grpc.health.v1.Health/Watch",
                                request_serializer=lambda b: b,
                                response_deserializer=lambda b: b)(b"", timeout=120)
    out = queue.Queue()

    def read():
        try:
            for msg in call:
                assert msg[:1] == b"\x08", msg
                out.put((msg[1] if len(msg) > 1 else 0, time.monotonic()))
        except grpc.RpcError as e:
            out.put((e.code(), time.monotonic()))

    threading.Thread(target=read, daemon=True).start()
    return channel, out


def test_health_watch_follows_unload_and_load_at_once(start_server, tiny_repo):
    server = explicit(start_server, tiny_repo)
    client = httpclient.InferenceServerClient(server.http_url)
    channel, messages = health_watch(server)
    assert messages.get(timeout=30)[0] == SERVING

    start = time.monotonic()
    client.unload_model("identity_fp32")  # a startup model: the server is no longer ready
    returned = time.monotonic()
    # The status went out before unload returned; Watch has no timer, so only the
    # notification can bring it (a generous timeout for a loaded machine).
    status, arrived = messages.get(timeout=30)
    assert status == NOT_SERVING
    print(f"\nunload took {1000 * (returned - start):.1f} ms; NOT_SERVING arrived "
          f"{1000 * (arrived - returned):+.1f} ms after it returned")

    client.load_model("identity_fp32")
    returned = time.monotonic()
    status, arrived = messages.get(timeout=30)
    assert status == SERVING
    print(f"SERVING arrived {1000 * (arrived - returned):+.1f} ms after load returned")
    assert messages.empty()

    assert server.stop() == 0
    assert messages.get(timeout=30)[0] == NOT_SERVING
    assert messages.get(timeout=30)[0] == grpc.StatusCode.UNAVAILABLE
    channel.close()
