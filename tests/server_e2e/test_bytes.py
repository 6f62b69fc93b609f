"""BYTES tensors in and out with Triton's clients (HTTP binary, HTTP JSON, gRPC) on text_ops:
ECHO = TEXT, NUMBER = float(NUMTEXT); a request the model cannot parse fails alone."""

import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

TEXT = np.array([[b"", b"a\x00b"], [b"\xff\xfe", "h\u00e9llo".encode()]], dtype=np.object_)
NUMTEXT = np.array([[b"1.5"], [b"-3e2"]], dtype=np.object_)


def _infer(module, url, text, numtext, binary=True):
    client = module.InferenceServerClient(url)
    inputs = [module.InferInput("TEXT", list(text.shape), "BYTES"),
              module.InferInput("NUMTEXT", list(numtext.shape), "BYTES")]
    if module is httpclient:
        inputs[0].set_data_from_numpy(text, binary_data=binary)
        inputs[1].set_data_from_numpy(numtext, binary_data=binary)
        outputs = [httpclient.InferRequestedOutput("ECHO", binary_data=binary),
                   httpclient.InferRequestedOutput("NUMBER", binary_data=binary)]
    else:
        inputs[0].set_data_from_numpy(text)
        inputs[1].set_data_from_numpy(numtext)
        outputs = [grpcclient.InferRequestedOutput("ECHO"), grpcclient.InferRequestedOutput("NUMBER")]
    return client.infer("text_ops", inputs, outputs=outputs)


@pytest.mark.parametrize("protocol", ["http-binary", "grpc"])
def test_bytes_round_trip(server, protocol):
    module, url = (grpcclient, server.grpc_url) if protocol == "grpc" else (httpclient, server.http_url)
    result = _infer(module, url, TEXT, NUMTEXT)
    echo = result.as_numpy("ECHO")
    assert echo.shape == (2, 2)
    assert [bytes(x) for x in echo.ravel()] == [bytes(x) for x in TEXT.ravel()]
    np.testing.assert_array_equal(result.as_numpy("NUMBER"), np.array([[1.5], [-300.0]], np.float32))


def test_bytes_as_json(server):
    # JSON carries strings: UTF-8 text only.
    text = np.array([[b"abc", "h\u00e9llo".encode()]], dtype=np.object_)
    result = _infer(httpclient, server.http_url, text, np.array([[b"42"]], dtype=np.object_),
                    binary=False)
    echo = [x.encode() if isinstance(x, str) else bytes(x) for x in result.as_numpy("ECHO").ravel()]
    assert echo == [b"abc", "h\u00e9llo".encode()]
    np.testing.assert_array_equal(result.as_numpy("NUMBER"), np.array([[42.0]], np.float32))


def test_unparsable_request_fails_alone(server):
    # Concurrent requests share batches; the one whose NUMTEXT is not a number gets a 400 naming
    # it, the others their results.
    results, errors = {}, {}

    def send(i, numtext):
        try:
            r = _infer(httpclient, server.http_url, np.array([[b"x", b"y"]], dtype=np.object_),
                       np.array([[numtext]], dtype=np.object_))
            results[i] = r.as_numpy("NUMBER")
        except InferenceServerException as e:
            errors[i] = e

    payloads = [b"1", b"2", b"not a number", b"4", b"5", b"6"]
    for _ in range(5):
        threads = [threading.Thread(target=send, args=(i, p)) for i, p in enumerate(payloads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert set(errors) == {2}, {i: str(e) for i, e in errors.items()}
        assert "not a number" in str(errors[2]) and errors[2].status() == "400"
        for i in (0, 1, 3, 4, 5):
            np.testing.assert_array_equal(results[i], np.array([[float(payloads[i])]], np.float32))
        results.clear()
        errors.clear()
