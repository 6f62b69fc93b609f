"""pin_threads in every adapter: hello says whether it pins; an adapter that pins applies its
framework's mechanism and reports it in the load settings; one that cannot refuses a pinned load
with the reason, never running it unpinned."""

import os

import numpy as np
import pytest

from peer_driver import FRAMEWORKS, framework_importable, load_request

PINS = {"onnxruntime", "openvino"}


def _ort_affinities(threads):
    cpus = sorted(os.sched_getaffinity(0))
    return ";".join(str(cpus[i % len(cpus)] + 1) for i in range(1, threads))


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_hello_says_whether_it_pins(peer_factory, framework):
    peer = peer_factory(framework)
    hello = peer.send(cmd="hello")
    assert hello["ok"] is True
    assert hello["pin_threads"] is (framework in PINS), hello
    assert isinstance(hello["pin_threads_note"], str) and hello["pin_threads_note"], hello


@pytest.mark.parametrize("framework", sorted(set(FRAMEWORKS) - PINS))
def test_pinned_load_is_refused_with_the_reason(peer_factory, framework, tiny, tmp_path):
    peer = peer_factory(framework)
    hello = peer.send(cmd="hello")
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tmp_path / "work", threads=2,
                                    pin_threads=True))
    assert load["ok"] is False, load
    if hello["available"]:
        assert f"thread pinning is not supported by {framework}: " in load["error"], load
        assert hello["pin_threads_note"] in load["error"]
    else:
        assert "not available" in load["error"], load


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_pin_threads_must_be_a_boolean(peer_factory, framework, tiny, tmp_path):
    if not framework_importable(framework):
        pytest.skip(f"{framework} not installed: load stops at availability")
    peer = peer_factory(framework)
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tmp_path / "work",
                                    pin_threads="yes"))
    assert load["ok"] is False and "'pin_threads' must be true or false" in load["error"], load


@pytest.mark.parametrize("framework", sorted(PINS))
@pytest.mark.parametrize("pinned", [False, True])
def test_pinning_adapter_applies_and_reports_it(peer_factory, framework, pinned, tiny, tmp_path):
    if not framework_importable(framework):
        pytest.skip(f"{framework} not installed")
    peer = peer_factory(framework)
    load = peer.send(**load_request(tiny["model"], tiny["feeds"], tmp_path / "work", threads=2,
                                    pin_threads=pinned))
    assert load["ok"] is True, load
    settings = load["settings"]
    if framework == "onnxruntime":
        assert settings["pin_threads"] is pinned
        want = _ort_affinities(2) if pinned else "not set"
        assert settings["intra_op_thread_affinities"] == want, settings
    else:
        assert settings["ENABLE_CPU_PINNING"] is pinned, settings
    out_dir = tmp_path / "out"
    outs = peer.send(cmd="outputs", inputs_dir=str(tiny["inputs_dir"]), out_dir=str(out_dir))
    assert outs["ok"] is True, outs
    for name, want in tiny["reference"].items():
        np.testing.assert_allclose(np.load(out_dir / f"{name}.npy"), want, rtol=1e-4, atol=1e-4)
