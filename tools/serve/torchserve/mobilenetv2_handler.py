"""TorchServe handler for the zoo's MobileNetV2: raw float32 NCHW [1,3,224,224] in, raw logits out.

Request body: 602,112 bytes, the little-endian float32 tensor [1,3,224,224] in C order (no image
decoding, no normalization). Response: 4,000 bytes, the little-endian float32 logits [1,1000].
A body of any other size is answered 400 naming the size that came and the size expected.

Settings come from the archive's model-config.yaml, `handler:` section: torch_threads
(torch.set_num_threads), torch_interop_threads (torch.set_num_interop_threads) and jit
(optimize_for_inference | freeze | none, applied to the loaded TorchScript module as the torch
peer bench/peers/torch.py does) and warmup_runs (calls on a zero tensor before the worker
reports ready, so TorchScript's profiling runs fall outside the measurement). Calls run under
torch.inference_mode().
"""

import logging
import os

import numpy as np
import torch

log = logging.getLogger(__name__)

SHAPE = (1, 3, 224, 224)
INPUT_BYTES = 4 * 3 * 224 * 224
JITS = ("optimize_for_inference", "freeze", "none")


class MobileNetV2Handler:
    def __init__(self):
        self.module = None
        self.initialized = False

    def initialize(self, context):
        settings = (getattr(context, "model_yaml_config", None) or {}).get("handler", {})
        threads = int(settings.get("torch_threads", 1))
        interop = int(settings.get("torch_interop_threads", 1))
        jit = settings.get("jit", "optimize_for_inference")
        if jit not in JITS:
            raise ValueError(f"model-config.yaml handler.jit is {jit!r}, expected one of {JITS}")
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(interop)
        model_dir = context.system_properties.get("model_dir")
        serialized = context.manifest["model"]["serializedFile"]
        module = torch.jit.load(os.path.join(model_dir, serialized), map_location="cpu").eval()
        if jit == "optimize_for_inference":
            module = torch.jit.optimize_for_inference(module)
        elif jit == "freeze":
            module = torch.jit.freeze(module)
        warmup_runs = int(settings.get("warmup_runs", 0))
        if warmup_runs < 0 or warmup_runs > 1000:
            raise ValueError(f"model-config.yaml handler.warmup_runs must be 0..1000, got {warmup_runs}")
        with torch.inference_mode():  # TorchScript's profiling executor optimizes after its first calls
            for _ in range(warmup_runs):
                module(torch.zeros(SHAPE))
        self.module = module
        log.info("mobilenetv2 handler: torch %s, %d intra-op threads, %d inter-op threads, jit %s, "
                 "%d warmup runs, OMP_NUM_THREADS=%s, OMP_WAIT_POLICY=%s", torch.__version__,
                 torch.get_num_threads(), torch.get_num_interop_threads(), jit, warmup_runs,
                 os.environ.get("OMP_NUM_THREADS", "(unset)"), os.environ.get("OMP_WAIT_POLICY", "(unset)"))
        self.initialized = True

    def handle(self, data, context):
        """One response per request of the batch: raw logits bytes, or an error message."""
        responses = []
        for idx, row in enumerate(data):
            body = row.get("body") if row.get("body") is not None else row.get("data")
            if not isinstance(body, (bytes, bytearray)) or len(body) != INPUT_BYTES:
                got = f"{len(body)} bytes" if isinstance(body, (bytes, bytearray)) else type(body).__name__
                message = (f"request body must be the raw little-endian float32 tensor [1,3,224,224] "
                           f"({INPUT_BYTES} bytes, Content-Type application/octet-stream); got {got}")
                context.set_response_status(400, message, idx)
                responses.append(message)
                continue
            tensor = torch.from_numpy(np.frombuffer(body, dtype="<f4").astype(np.float32).reshape(SHAPE))
            with torch.inference_mode():
                logits = self.module(tensor)
            context.set_response_content_type(idx, "application/octet-stream")
            responses.append(logits.contiguous().numpy().astype("<f4").tobytes())
        return responses


_service = MobileNetV2Handler()


def handle(data, context):
    if not _service.initialized:
        _service.initialize(context)
    if data is None:
        return None
    return _service.handle(data, context)
