"""Shared part of the peer adapters that `osprey bench` runs, one process per framework.

The protocol: one JSON object per line on stdin, one JSON answer per line on stdout
(nothing else reaches stdout: file descriptor 1 is pointed at stderr, so prints from
Python or from native libraries become logs). Commands: hello, load, run, outputs, quit.
Every answer carries "ok"; a failure is {"ok": false, "error": "<reason>"} and the
adapter keeps serving. bench/peers/onnxruntime.py is the smallest complete adapter.

An adapter subclasses `Adapter` and implements `probe`, `load_model`, `make_call` and
`outputs`; `serve(adapter)` runs the loop.
"""

import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

MAX_ITERATIONS = 1_000_000
MAX_THREADS = 1024
MAX_DIM = 1 << 31
PRECISIONS = ("fp32", "fast")
DTYPES = ("float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
          "uint8", "bool")  # as numpy names them; bfloat16 and string have no .npy form


class AdapterError(Exception):
    """A failure reported to the caller as {"ok": false, "error": str(e)}."""


@dataclass
class InputSpec:
    name: str
    dtype: str
    shape: list


@dataclass
class LoadRequest:
    model: Path
    threads: int
    precision: str
    batch: int
    inputs: list  # of InputSpec, in the order given
    work_dir: Path
    options: dict
    pin_threads: bool = False  # pin worker threads to CPUs (only sent when hello said it can)


# ---- validation ---------------------------------------------------------------

def _require(obj, key, kind, what):
    if key not in obj:
        raise AdapterError(f"{what}: missing field '{key}'")
    value = obj[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise AdapterError(f"{what}: field '{key}' must be an integer, got {json.dumps(value)}")
    if kind is not int and not isinstance(value, kind):
        raise AdapterError(f"{what}: field '{key}' must be a {kind.__name__}, got {json.dumps(value)}")
    return value


def _int_in(obj, key, lo, hi, what, default=None):
    if default is not None and key not in obj:
        return default
    value = _require(obj, key, int, what)
    if not lo <= value <= hi:
        raise AdapterError(f"{what}: field '{key}' must be in [{lo}, {hi}], got {value}")
    return value


def _abs_path(obj, key, what):
    text = _require(obj, key, str, what)
    path = Path(text)
    if not path.is_absolute():
        raise AdapterError(f"{what}: field '{key}' must be an absolute path, got '{text}'")
    return path


def check_file_name(name, what):
    """Tensor names become file names (<dir>/<name>.npy); refuse ones that cannot."""
    if not name or "/" in name or "\0" in name or name in (".", ".."):
        raise AdapterError(f"{what} '{name}' cannot be used as a file name")
    return name


def parse_load(req):
    what = "load"
    model = _abs_path(req, "model", what)
    if not model.is_file():
        raise AdapterError(f"load: model file not found: {model}")
    threads = _int_in(req, "threads", 1, MAX_THREADS, what)
    precision = _require(req, "precision", str, what)
    if precision not in PRECISIONS:
        raise AdapterError(f"load: precision must be one of {list(PRECISIONS)}, got '{precision}'")
    batch = _int_in(req, "batch", 1, MAX_DIM, what, default=1)
    raw_inputs = _require(req, "inputs", dict, what)
    if not raw_inputs:
        raise AdapterError("load: 'inputs' must name at least one input")
    inputs = []
    for name, spec in raw_inputs.items():
        check_file_name(name, "load: input name")
        where = f"load: input '{name}'"
        if not isinstance(spec, dict):
            raise AdapterError(f"{where} must be an object with dtype and shape")
        dtype = _require(spec, "dtype", str, where)
        if dtype not in DTYPES:
            raise AdapterError(f"{where}: dtype '{dtype}' is not one of {list(DTYPES)}")
        shape = _require(spec, "shape", list, where)
        if any(isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_DIM for d in shape):
            raise AdapterError(f"{where}: shape must be a list of positive integers, got {json.dumps(shape)}")
        inputs.append(InputSpec(name, dtype, shape))
    work_dir = _abs_path(req, "work_dir", what)
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AdapterError(f"load: cannot create work_dir {work_dir}: {e.strerror}") from None
    options = req.get("options", {})
    if not isinstance(options, dict):
        raise AdapterError(f"load: 'options' must be an object, got {json.dumps(options)}")
    pin_threads = req.get("pin_threads", False)
    if not isinstance(pin_threads, bool):
        raise AdapterError(f"load: field 'pin_threads' must be true or false, got {json.dumps(pin_threads)}")
    return LoadRequest(model, threads, precision, batch, inputs, work_dir, options, pin_threads)


def load_inputs(inputs_dir, specs):
    """Reads <inputs_dir>/<name>.npy for every declared input and checks dtype and shape."""
    feeds = {}
    for spec in specs:
        path = inputs_dir / f"{spec.name}.npy"
        if not path.is_file():
            raise AdapterError(f"input file not found: {path}")
        try:
            array = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise AdapterError(f"cannot read {path} as .npy: {e}") from None
        if array.dtype.name != spec.dtype or list(array.shape) != spec.shape:
            raise AdapterError(
                f"input '{spec.name}' in {path} is {array.dtype.name}{list(array.shape)}, "
                f"load declared {spec.dtype}{spec.shape}")
        feeds[spec.name] = np.ascontiguousarray(array)
    return feeds


# ---- measurements -------------------------------------------------------------

def memory_bytes():
    """(VmRSS, VmHWM) of this process in bytes, from /proc/self/status."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024  # the kernel reports kB
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def time_calls(call, iterations, warmup):
    """Runs `call` warmup times, then times each of `iterations` calls (perf_counter_ns
    around the call alone). Returns the latencies in microseconds."""
    for _ in range(warmup):
        call()
    latencies = []
    for _ in range(iterations):
        t0 = time.perf_counter_ns()
        call()
        t1 = time.perf_counter_ns()
        latencies.append((t1 - t0) / 1000.0)
    return latencies


def conversion_key(request, **extra):
    """Identifies one conversion: the model file (path, size, mtime), the input shapes and
    whatever else changes the converter's output. A converted model in work_dir is reused
    only when its recorded key matches."""
    st = request.model.stat()
    doc = {"model": str(request.model), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
           "inputs": [[i.name, i.dtype, i.shape] for i in request.inputs], **extra}
    return json.dumps(doc, sort_keys=True)


def converted(work_dir, key, files):
    """Whether `files` in work_dir were made by the conversion `key` (see mark_converted)."""
    stamp = work_dir / "conversion.json"
    return stamp.is_file() and stamp.read_text() == key and all((work_dir / f).is_file() for f in files)


def mark_converted(work_dir, key):
    (work_dir / "conversion.json").write_text(key)


def run_converter(argv, cwd, what, log_name, timeout_s=600):
    """Runs a converter; returns its combined output, or raises AdapterError with its tail."""
    import subprocess

    try:
        done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise AdapterError(f"load: {what} did not finish within {timeout_s} s") from None
    except OSError as e:
        raise AdapterError(f"load: cannot run {what} ({argv[0]}): {e.strerror}") from None
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # drop terminal colours
    (Path(cwd) / log_name).write_text(text)
    if done.returncode != 0:
        tail = " | ".join(line for line in text.strip().splitlines()[-6:])
        raise AdapterError(f"load: {what} failed (exit {done.returncode}): {tail}")
    return text


def onnx_signature(model):
    """([input names], [(output name, [dim or None, ...])]) in graph order, initializers excluded."""
    import onnx

    m = onnx.load(str(model), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [v.name for v in m.graph.input if v.name not in inits]
    outputs = []
    for v in m.graph.output:
        dims = [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
        outputs.append((v.name, dims))
    return inputs, outputs


def package_version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def affinity_cpus():
    """The CPUs this process may run on, ascending (its affinity mask)."""
    return sorted(os.sched_getaffinity(0))


def worker_cpus(threads):
    """Osprey's pinning rule, for adapters that pin: worker i (1 <= i < threads; the calling
    thread 0 is not pinned) goes to the (i mod k)-th of the k CPUs in the affinity mask."""
    cpus = affinity_cpus()
    return [cpus[i % len(cpus)] for i in range(1, threads)]


def isolate_script_dir():
    """Adapters are named after their framework (onnxruntime.py, torch.py, ...). Run as a
    script, their folder is sys.path[0] and `import onnxruntime` would find the adapter
    itself; drop that folder once adapter_common has been imported from it."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]


# ---- the adapter and the loop -------------------------------------------------

class Adapter:
    """Base class. Subclasses set `framework` and implement:
    probe() -> (version or None, reason when unavailable or None)
    load_model(LoadRequest) -> dict with "settings", "precision_used", "notes"
    make_call(feeds) -> zero-argument callable running one inference (the timed part)
    outputs(feeds) -> dict name -> numpy array
    """

    framework = "?"
    # Per-framework load options: name -> (allowed values, default). Others are refused.
    options = {}
    # Thread pinning (load's pin_threads): whether load_model honours it, and how it pins or
    # why it cannot. An adapter that cannot pin refuses a pinned load; it never runs unpinned.
    pins_threads = False
    pin_threads_note = "this adapter has no thread-pinning setting"

    def __init__(self):
        self.request = None  # the LoadRequest of the model loaded, if any
        self._probe = None

    def probe(self):
        raise NotImplementedError

    def load_model(self, request):
        raise NotImplementedError

    def make_call(self, feeds):
        raise NotImplementedError

    def outputs(self, feeds):
        raise NotImplementedError

    # -- commands --

    def availability(self):
        if self._probe is None:
            try:
                self._probe = self.probe()
            except Exception as e:  # a broken install is still an answer, not a crash
                self._probe = (None, f"{self.framework} failed to import: {type(e).__name__}: {e}")
        return self._probe

    def cmd_hello(self, _req):
        version, reason = self.availability()
        answer = {"ok": True, "framework": self.framework, "pin_threads": self.pins_threads,
                  "pin_threads_note": self.pin_threads_note}
        if reason is None:
            answer.update(version=version, available=True)
        else:
            answer.update(available=False, reason=reason)
            if version:
                answer["version"] = version
        return answer

    def cmd_load(self, req):
        _, reason = self.availability()
        if reason is not None:
            raise AdapterError(f"{self.framework} not available: {reason}")
        request = parse_load(req)
        request.options = self._resolve_options(request.options)
        if request.pin_threads and not self.pins_threads:
            raise AdapterError(f"thread pinning is not supported by {self.framework}: {self.pin_threads_note}")
        self.request = None
        t0 = time.perf_counter_ns()
        info = self.load_model(request)
        load_ms = (time.perf_counter_ns() - t0) / 1e6
        self.request = request
        answer = {"ok": True, "load_ms": round(load_ms, 3)}
        answer.update(info)
        return answer

    def _resolve_options(self, given):
        resolved = {}
        for key in given:
            if key not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise AdapterError(f"load: unknown option '{key}' for {self.framework} (known: {known})")
        for key, (allowed, default) in self.options.items():
            value = given.get(key, default)
            if value not in allowed:
                raise AdapterError(f"load: option '{key}' must be one of {list(allowed)}, got {json.dumps(value)}")
            resolved[key] = value
        return resolved

    def _loaded(self, cmd):
        if self.request is None:
            raise AdapterError(f"{cmd}: no model loaded (send a successful load first)")
        return self.request

    def cmd_run(self, req):
        request = self._loaded("run")
        inputs_dir = _abs_path(req, "inputs_dir", "run")
        iterations = _int_in(req, "iterations", 1, MAX_ITERATIONS, "run")
        warmup = _int_in(req, "warmup", 0, MAX_ITERATIONS, "run", default=0)
        feeds = load_inputs(inputs_dir, request.inputs)
        call = self.make_call(feeds)
        latencies = time_calls(call, iterations, warmup)
        rss, peak = memory_bytes()
        return {"ok": True, "latencies_us": latencies, "rss_bytes": rss, "peak_rss_bytes": peak}

    def cmd_outputs(self, req):
        request = self._loaded("outputs")
        inputs_dir = _abs_path(req, "inputs_dir", "outputs")
        out_dir = _abs_path(req, "out_dir", "outputs")
        feeds = load_inputs(inputs_dir, request.inputs)
        results = self.outputs(feeds)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise AdapterError(f"outputs: cannot create out_dir {out_dir}: {e.strerror}") from None
        names = []
        for name, value in results.items():
            check_file_name(name, "output name")
            np.save(out_dir / f"{name}.npy", np.asarray(value))
            names.append(name)
        return {"ok": True, "outputs": names}


def _protocol_stream():
    """Keeps the real stdout for answers and sends everything else written to fd 1
    (Python prints, native libraries' printf) to stderr."""
    sys.stdout.flush()
    answers = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return answers


def handle(adapter, line):
    """One request line -> (answer dict, quit?)."""
    try:
        req = json.loads(line)
    except json.JSONDecodeError as e:
        return {"ok": False, "error": f"malformed command: not JSON ({e.msg} at column {e.colno})"}, False
    if not isinstance(req, dict):
        return {"ok": False, "error": "malformed command: expected a JSON object"}, False
    cmd = req.get("cmd")
    if cmd == "quit":
        return {"ok": True}, True
    handler = getattr(adapter, f"cmd_{cmd}", None) if isinstance(cmd, str) else None
    if handler is None:
        return {"ok": False, "error": f"unknown cmd {json.dumps(cmd)}: expected hello, load, run, "
                                      "outputs or quit"}, False
    try:
        return handler(req), False
    except AdapterError as e:
        return {"ok": False, "error": str(e)}, False
    except Exception as e:  # the framework's own failure, reported with its message
        return {"ok": False, "error": f"{cmd} failed in {adapter.framework}: {type(e).__name__}: {e}"}, False


def _json_safe(answer):
    """Non-finite floats are not JSON; answers never carry them."""
    for key, value in list(answer.items()):
        if isinstance(value, float) and not math.isfinite(value):
            answer[key] = None
    return answer


def serve(adapter):
    answers = _protocol_stream()
    for line in sys.stdin:
        if not line.strip():
            continue
        answer, done = handle(adapter, line)
        # default=str: a framework value of an unexpected type is reported, not a crash
        answers.write(json.dumps(_json_safe(answer), default=str) + "\n")
        answers.flush()
        if done:
            break
    answers.close()
    sys.exit(0)
