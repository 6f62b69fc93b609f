"""onnxruntime's com.microsoft quantized ops of the QOperator format against onnxruntime's own
kernels: each op alone on random bytes (uint8 and int8, broadcasting, the layouts and window
attributes), and a small network and a small attention block quantized by `quantize_static(...,
QuantFormat.QOperator)` that use them all (and ONNX QLinearMatMul with constant and computed B),
at every optimization level.

onnxruntime computes the table-driven ops (Sigmoid, LeakyRelu, Softmax) and the pools through
its own float arithmetic; a result within float rounding of a quantization boundary can land
one step away. So: every byte within one step, and at most 2% of them off by one. Ops that
only re-quantize (Concat, Where, Mul, Add) are held to the same bound.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_zoo import run_osprey

pytestmark = pytest.mark.zoo

MS = "com.microsoft"
RNG_SEED = 7


def byte_type(signed):
    return (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)


def random_bytes(rng, shape, signed):
    lo, hi = (-128, 128) if signed else (0, 256)
    return rng.integers(lo, hi, size=shape).astype(np.int8 if signed else np.uint8)


class NodeModel:
    """One com.microsoft node: graph inputs for its tensors, initializers for its parameters."""

    def __init__(self, op, **attrs):
        self.op, self.attrs = op, attrs
        self.inputs, self.inits, self.names, self.feeds = [], [], [], {}

    def tensor(self, name, value):
        elem = helper.np_dtype_to_tensor_dtype(value.dtype)
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(value.shape)))
        self.names.append(name)
        self.feeds[name] = value

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        self.names.append(name)

    def absent(self):
        self.names.append("")

    def save(self, path, out_elem):
        node = helper.make_node(self.op, self.names, ["y"], domain=MS, **self.attrs)
        out = helper.make_tensor_value_info("y", out_elem, None)
        graph = helper.make_graph([node], "g", self.inputs, [out], initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
        onnx.save(model, path)
        return path


def scale(v):
    return np.array(v, np.float32)


def zp(v, signed):
    return np.array(v, np.int8 if signed else np.uint8)


def check_bytes(ours, ref, what):
    assert ours.dtype == ref.dtype, f"{what}: type {ours.dtype}, onnxruntime {ref.dtype}"
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape}, onnxruntime {ref.shape}"
    diff = np.abs(ours.astype(np.int32) - ref.astype(np.int32))
    off = float(np.mean(diff > 0)) if diff.size else 0.0
    print(f"{what}: {diff.size} values, max step difference {diff.max(initial=0)}, {off:.2%} off by one")
    assert diff.max(initial=0) <= 1, f"{what}: a value {diff.max()} steps from onnxruntime's"
    assert off <= 0.02, f"{what}: {off:.2%} of the values one step from onnxruntime's"


def run_both(osprey_bin, ort_sessions, tmp_path, model, path, what, ref_path=None):
    """Osprey on `path` at -O 0 and 2 against onnxruntime on `ref_path` (default: the same)."""
    ref = ort_sessions(ref_path or path).run(None, model.feeds)[0]
    for level in (0, 2):
        work = tmp_path / f"O{level}"
        work.mkdir()
        ours = run_osprey(osprey_bin, path, model.feeds, work, ("-O", str(level)))["y"]
        check_bytes(ours, ref, f"{what} -O {level}")


def binary_model(rng, op, signed, a_shape, b_shape, omit_c_zero_point=False):
    m = NodeModel(op)
    m.tensor("a", random_bytes(rng, a_shape, signed))
    m.const("a_scale", scale(0.05))
    m.const("a_zp", zp(-7 if signed else 121, signed))
    m.tensor("b", random_bytes(rng, b_shape, signed))
    m.const("b_scale", scale(0.02))
    m.const("b_zp", zp(5 if signed else 130, signed))
    m.const("c_scale", scale(0.3 if op == "QLinearMul" else 0.07))
    if not omit_c_zero_point:  # (onnxruntime takes an omitted zero point only at the end)
        m.const("c_zp", zp(3 if signed else 128, signed))
    return m


BINARY = [("QLinearMul", s, a, b, o) for s in (False, True)
          for a, b, o in (([2, 8, 5, 5], [1, 8, 1, 1], False), ([3, 4], [3, 4], False), ([6], [2, 1, 6], True))]


@pytest.mark.parametrize("op,signed,a_shape,b_shape,omit", BINARY + [("QLinearAdd", True, [2, 8, 5, 5], [1, 8, 1, 1], False)],
                         ids=lambda v: str(v))
def test_binary(osprey_bin, ort_sessions, tmp_path, op, signed, a_shape, b_shape, omit):
    rng = np.random.default_rng(RNG_SEED)
    m = binary_model(rng, op, signed, a_shape, b_shape, omit)
    run_both(osprey_bin, ort_sessions, tmp_path, m, m.save(tmp_path / "m.onnx", byte_type(signed)[0]), op)


@pytest.mark.parametrize("op,signed,y_zp", [(op, s, z) for op in ("QLinearSigmoid", "QLinearLeakyRelu")
                                            for s in (False, True) for z in (True, False)])
def test_lookup_activation(osprey_bin, ort_sessions, tmp_path, op, signed, y_zp):
    """Without y's zero point (0 of X's type) onnxruntime 1.32 aborts; it runs the same model
    with an explicit 0 instead."""
    def model(with_y_zp, zero):
        rng = np.random.default_rng(RNG_SEED)
        m = NodeModel(op, **({"alpha": 0.15} if op == "QLinearLeakyRelu" else {}))
        m.tensor("x", random_bytes(rng, [2, 16, 9, 9], signed))
        m.const("x_scale", scale(0.06))
        m.const("x_zp", zp(-20 if signed else 110, signed))
        m.const("y_scale", scale(1 / 255 if op == "QLinearSigmoid" else 0.05))
        if with_y_zp:
            m.const("y_zp", zp(zero, signed))
        return m

    zero = (-128 if signed and op == "QLinearSigmoid" else (10 if signed else 40)) if y_zp else 0
    ours, ref = model(y_zp, zero), model(True, zero)
    elem = byte_type(signed)[0]
    run_both(osprey_bin, ort_sessions, tmp_path, ours, ours.save(tmp_path / "m.onnx", elem), f"{op} signed={signed}",
             ref_path=ref.save(tmp_path / "ref.onnx", elem))


@pytest.mark.parametrize("signed,shape,axis,opset", [(False, [4, 10, 32], -1, 13), (True, [4, 10, 32], -1, 13),
                                                     (False, [3, 5, 7], 1, 13), (False, [3, 5, 7], 1, 11)])
def test_softmax(osprey_bin, ort_sessions, tmp_path, signed, shape, axis, opset):
    rng = np.random.default_rng(RNG_SEED)
    m = NodeModel("QLinearSoftmax", axis=axis, opset=opset)
    m.tensor("x", random_bytes(rng, shape, signed))
    m.const("x_scale", scale(0.04))
    m.const("x_zp", zp(0 if signed else 128, signed))
    m.const("y_scale", scale(1 / 256))
    m.const("y_zp", zp(-128 if signed else 0, signed))
    run_both(osprey_bin, ort_sessions, tmp_path, m, m.save(tmp_path / "m.onnx", byte_type(signed)[0]),
             f"QLinearSoftmax axis={axis} opset={opset}")


@pytest.mark.parametrize("signed,axis", [(False, 1), (True, 1), (False, -1)])
def test_concat(osprey_bin, ort_sessions, tmp_path, signed, axis):
    rng = np.random.default_rng(RNG_SEED)
    m = NodeModel("QLinearConcat", axis=axis)
    m.const("y_scale", scale(0.05))
    m.const("y_zp", zp(4 if signed else 125, signed))
    for i, (s, z) in enumerate([(0.05, 4 if signed else 125), (0.11, -30 if signed else 90), (0.02, 0)]):
        shape = [2, 3 + i, 5, 6] if axis == 1 else [2, 3, 5, 2 + i]
        m.tensor(f"x{i}", random_bytes(rng, shape, signed))
        m.const(f"x{i}_scale", scale(s))
        m.const(f"x{i}_zp", zp(z, signed))
    run_both(osprey_bin, ort_sessions, tmp_path, m, m.save(tmp_path / "m.onnx", byte_type(signed)[0]),
             f"QLinearConcat axis={axis}")


@pytest.mark.parametrize("signed", [False, True])
def test_where(osprey_bin, ort_sessions, tmp_path, signed):
    rng = np.random.default_rng(RNG_SEED)
    m = NodeModel("QLinearWhere")
    m.tensor("c", rng.integers(0, 2, size=[4, 1, 6]).astype(bool))
    m.tensor("x", random_bytes(rng, [4, 5, 6], signed))
    m.const("x_scale", scale(0.08))
    m.const("x_zp", zp(-3 if signed else 100, signed))
    m.tensor("yv", random_bytes(rng, [1, 6], signed))
    m.const("y_scale", scale(0.03))
    m.const("y_zp", zp(12 if signed else 140, signed))
    m.const("z_scale", scale(0.05))
    m.const("z_zp", zp(0 if signed else 128, signed))
    run_both(osprey_bin, ort_sessions, tmp_path, m, m.save(tmp_path / "m.onnx", byte_type(signed)[0]), "QLinearWhere")


POOLS = [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[1, 1], auto_pad="SAME_UPPER"),
]


@pytest.mark.parametrize("signed,channels_last,attrs", [(s, cl, a) for s in (False, True) for cl in (0, 1) for a in POOLS])
def test_average_pool(osprey_bin, ort_sessions, tmp_path, signed, channels_last, attrs):
    rng = np.random.default_rng(RNG_SEED)
    m = NodeModel("QLinearAveragePool", channels_last=channels_last, **attrs)
    m.tensor("x", random_bytes(rng, [2, 9, 9, 5] if channels_last else [2, 5, 9, 9], signed))
    # (Scales whose ratio makes exact halves common would leave the ties to each side's float
    # rounding: 0.05 / 0.04 put 2-7% of the means one step apart.)
    m.const("x_scale", scale(0.0473))
    m.const("x_zp", zp(-9 if signed else 119, signed))
    m.const("y_scale", scale(0.0391))
    m.const("y_zp", zp(6 if signed else 131, signed))
    run_both(osprey_bin, ort_sessions, tmp_path, m, m.save(tmp_path / "m.onnx", byte_type(signed)[0]),
             f"QLinearAveragePool channels_last={channels_last} {attrs}")


def small_network(path):
    """A float network whose QOperator quantization uses every op above."""
    rng = np.random.default_rng(3)
    w = lambda *s: numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32))  # noqa: E731
    inits = []
    for name, shape in [("w1", (8, 3, 3, 3)), ("w2", (8, 8, 3, 3)), ("w3", (8, 8, 1, 1)), ("wf", (10, 16))]:
        t = w(*shape)
        t.name = name
        inits.append(t)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c1"], ["l1"], alpha=0.1),
        helper.make_node("Conv", ["l1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Mul", ["l1", "s2"], ["m2"]),
        helper.make_node("AveragePool", ["m2"], ["a2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxPool", ["m2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "w3"], ["c3"]),
        helper.make_node("Concat", ["a2", "c3"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "qop_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def test_quantized_network(osprey_bin, ort_sessions, tmp_path):
    float_path, q_path = tmp_path / "net.onnx", tmp_path / "net_int8.onnx"
    small_network(float_path)
    rng = np.random.default_rng(5)
    quantize_qoperator(float_path, q_path, [{"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)} for _ in range(8)])
    ops = {n.op_type for n in onnx.load(str(q_path)).graph.node}
    wanted = {"QLinearLeakyRelu", "QLinearSigmoid", "QLinearMul", "QLinearAveragePool", "QLinearConcat", "QLinearSoftmax"}
    assert wanted <= ops, f"the quantizer wrote {sorted(ops)}"
    feeds = {"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)}
    ref = ort_sessions(q_path).run(None, feeds)[0]
    step = 1 / 256  # QLinearSoftmax's output scale
    for level in (0, 1, 2):
        work = tmp_path / f"O{level}"
        work.mkdir()
        ours = run_osprey(osprey_bin, q_path, feeds, work, ("-O", str(level)))["probs"]
        err = float(np.max(np.abs(ours - ref)))
        print(f"-O {level}: max|err| {err:.5f} ({err / step:.1f} steps of the softmax's output)")
        assert ours.shape == ref.shape
        assert err <= 3 * step + 1e-6, f"-O {level}: max|err| {err} against onnxruntime"


def small_attention(path):
    """x [1, 8, 16] -> a linear layer -> scores q q^T -> Softmax -> probabilities x q -> y: its
    QOperator quantization has QLinearMatMul with a constant B and two with computed ones."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array((rng.standard_normal((16, 16)) * 0.4).astype(np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["q"]),
        helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "qt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "q"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "qop_attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])], initializer=[w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def quantize_qoperator(float_path, q_path, batches):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(float_path), str(q_path), Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def test_quantized_attention(osprey_bin, ort_sessions, tmp_path):
    float_path, q_path = tmp_path / "att.onnx", tmp_path / "att_int8.onnx"
    small_attention(float_path)
    rng = np.random.default_rng(6)
    quantize_qoperator(float_path, q_path, [{"x": rng.uniform(-1, 1, (1, 8, 16)).astype(np.float32)} for _ in range(8)])
    kinds = [n.op_type for n in onnx.load(str(q_path)).graph.node]
    assert kinds.count("QLinearMatMul") == 3, f"the quantizer wrote {kinds}"
    feeds = {"x": rng.uniform(-1, 1, (1, 8, 16)).astype(np.float32)}
    ref = ort_sessions(q_path).run(None, feeds)[0]
    for level in (0, 1, 2):
        work = tmp_path / f"O{level}"
        work.mkdir()
        ours = run_osprey(osprey_bin, q_path, feeds, work, ("-O", str(level)))["y"]
        err = float(np.max(np.abs(ours - ref)))
        scale = float(np.max(np.abs(ref)))
        print(f"-O {level}: max|err| {err:.6f} of max|y| {scale:.3f}")
        assert ours.shape == ref.shape
        assert err <= 0.02 * scale, f"-O {level}: max|err| {err} against onnxruntime (max|y| {scale})"
