import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_driver  # noqa: E402


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """The tiny model, its seeded input written as .npy, and onnxruntime's outputs."""
    root = tmp_path_factory.mktemp("tiny")
    model = root / "tiny.onnx"
    peer_driver.make_tiny_model(model)
    feeds = {peer_driver.TINY_INPUT: np.random.RandomState(3).randn(*peer_driver.TINY_SHAPE).astype(np.float32)}
    peer_driver.write_inputs(root / "inputs", feeds)
    return {"model": model, "feeds": feeds, "inputs_dir": root / "inputs",
            "reference": peer_driver.reference_outputs(model, feeds), "root": root}


@pytest.fixture
def peer_factory(tmp_path):
    peers = []

    def start(framework, **kwargs):
        p = peer_driver.Peer(framework, tmp_path, **kwargs)
        peers.append(p)
        return p

    yield start
    for p in peers:
        p.close()
