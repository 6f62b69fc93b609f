# Runs the ONNX node conformance cases through onnxruntime with the same comparison as
# osprey_conformance (rtol 1e-3, atol 1e-7; training-domain cases excluded), to put
# Osprey's pass rate beside the peer's.   .venv/bin/python tools/conformance/ort_node_tests.py [DIR]
import glob, os, sys, numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper
ort.set_default_logger_severity(4)
root = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/libonnx-testdata/data/node"  # or a DIR of onnx_node_cases.py
passed = failed = training = 0
fails = []
def load_pb(path, kind):
    data = open(path, "rb").read()
    if kind == "tensor":
        t = onnx.TensorProto(); t.ParseFromString(data); return numpy_helper.to_array(t)
    if kind == "sequence":
        s = onnx.SequenceProto(); s.ParseFromString(data); return [numpy_helper.to_array(t) for t in s.tensor_values]
    o = onnx.OptionalProto(); o.ParseFromString(data)
    if o.HasField("tensor_value"): return numpy_helper.to_array(o.tensor_value)
    if o.HasField("sequence_value"): return [numpy_helper.to_array(t) for t in o.sequence_value.tensor_values]
    return None
def kind_of(t):
    if t.HasField("optional_type"): return "optional"
    if t.HasField("sequence_type"): return "sequence"
    return "tensor"
def same(a, b):
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if b is None: return a is None
    a = np.asarray(a); b = np.asarray(b)
    if a.shape != b.shape: return False
    if b.dtype.kind in "fc": return np.allclose(a, b, rtol=1e-3, atol=1e-7, equal_nan=True)
    return np.array_equal(a, b)
for d in sorted(glob.glob(root + "/test_*")):
    mb = open(d + "/model.onnx", "rb").read()
    if b"ai.onnx.preview.training" in mb: training += 1; continue
    try:
        m = onnx.load_from_string(mb)
        so = ort.SessionOptions(); so.intra_op_num_threads = 1
        s = ort.InferenceSession(mb, so, providers=["CPUExecutionProvider"])
        ok = True
        init = {i.name for i in m.graph.initializer}
        ins = [i for i in m.graph.input if i.name not in init]
        for ds in sorted(glob.glob(d + "/test_data_set_*")):
            feeds = {}
            for k, i in enumerate(ins):
                p = f"{ds}/input_{k}.pb"
                if os.path.exists(p): feeds[i.name] = load_pb(p, kind_of(i.type))
            outs = s.run(None, feeds)
            for k, o in enumerate(m.graph.output):
                if not same(outs[k], load_pb(f"{ds}/output_{k}.pb", kind_of(o.type))): ok = False
        if ok: passed += 1
        else: failed += 1; fails.append(os.path.basename(d) + " mismatch")
    except Exception as e:
        failed += 1; fails.append(os.path.basename(d) + " " + str(e).splitlines()[0][:100])
print(f"onnxruntime {ort.__version__}: {passed} passed, {failed} failed, {passed+failed} total ({100*passed/(passed+failed):.1f}%); {training} training excluded")
print("\n".join("FAIL " + f for f in fails))
