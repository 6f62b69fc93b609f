// qoperator_rewrite: ONNX's QLinearConv (QOperator format, int32 bias) becomes com.osprey
// QLinearConv with the same bias and arithmetic, com.microsoft QGemm a MatMulIntegerToFloat and a
// QuantizeLinear, com.microsoft QLinearAdd of one shape ours (the same computation); the outputs
// stay within one quantization step (the scaling is regrouped), and the session runs them on the
// int8 primitives at level 2. ONNX QLinearMatMul with a constant B becomes MatMulIntegerToFloat
// and a QuantizeLinear, bit for bit.
#include <set>

#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

// x float [1, 4, 6, 6] -> QuantizeLinear -> QLinearConv(3x3, pads 1, int8 weights, int32 bias)
// -> DequantizeLinear -> y.
ModelBuilder qoperator_conv(bool bias) {
  ModelBuilder m(13);
  m.input("x", kF, {1, 4, 6, 6}).output("y");
  m.initializer("xs", {}, {0.03f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {120});
  std::vector<int> w;
  for (int i = 0; i < 8 * 4 * 9; ++i) w.push_back((i * 29) % 200 - 100);
  typed_initializer(m, "w", onnx::TensorProto::INT8, {8, 4, 3, 3}, w);
  std::vector<float> ws;
  for (int i = 0; i < 8; ++i) ws.push_back(0.004f + 0.0005f * static_cast<float>(i));
  m.initializer("ws", {8}, ws);
  typed_initializer(m, "wz", onnx::TensorProto::INT8, {8}, std::vector<int>(8, 0));
  m.initializer("ys", {}, {0.05f});
  typed_initializer(m, "yz", onnx::TensorProto::UINT8, {}, {110});
  typed_initializer(m, "b", onnx::TensorProto::INT32, {8}, {-500, 300, 0, 1200, -75, 20, 900, -1000});
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  std::vector<std::string> conv_in = {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"};
  if (bias) conv_in.push_back("b");
  auto& conv = m.node("QLinearConv", conv_in, {"yq"});
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  m.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  return m;
}

TEST(QOperatorRewriteTest, OnnxQLinearConvBecomesTheFusedOp) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "bias" : "no bias");
    ModelBuilder m = qoperator_conv(bias);
    const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 6, 6}, -2.0f, 0.0277f)}};
    auto before = import_graph(m.bytes());
    auto after = optimized_graph(m.bytes(), pass_list(make_qoperator_rewrite()));
    ASSERT_TRUE(before && after);
    const std::string d = dump_graph(*after);
    EXPECT_EQ(count_op(*after, "com.osprey.QLinearConv"), 1) << d;
    EXPECT_EQ(count_op(*after, "QLinearConv"), 0) << d;
    const Tensor want = run_graph(*before, in)[0], got = run_graph(*after, in)[0];
    ASSERT_EQ(want.shape(), got.shape());
    // The fused op keeps the int32 bias and ONNX's arithmetic: the reference kernels agree exactly.
    int differ = 0;
    for (int64_t i = 0; i < want.numel(); ++i) differ += want.data<float>()[i] != got.data<float>()[i] ? 1 : 0;
    EXPECT_EQ(differ, 0) << differ << " of " << want.numel() << " differ";
    std::set<float> distinct(want.data<float>(), want.data<float>() + want.numel());
    EXPECT_GE(distinct.size(), 40u) << "the outputs should span the quantized range, not saturate";
    // The session at level 2 (the int8 convolution where oneDNN has VNNI, which may round an
    // element the other way) against level 0: within one step.
    SessionOptions o0, o2;
    o0.optimization_level = 0;
    auto s0 = Session::load_from_bytes(m.bytes(), o0);
    auto s2 = Session::load_from_bytes(m.bytes(), o2);
    ASSERT_TRUE(s0.ok() && s2.ok());
    auto r0 = (*s0)->run(in);
    auto r2 = (*s2)->run(in);
    ASSERT_TRUE(r0.ok() && r2.ok());
    const Tensor& y0 = (*r0)[0].second;
    const Tensor& y2 = (*r2)[0].second;
    for (int64_t i = 0; i < y0.numel(); ++i)
      EXPECT_LE(std::fabs(y0.data<float>()[i] - y2.data<float>()[i]), 0.05f * 1.001f) << "element " << i;
  }
}

TEST(QOperatorRewriteTest, NonConstantScalesStay) {
  ModelBuilder m(13);
  m.input("x", kF, {1, 1, 3, 3}).input("xs", kF, {}).output("y");
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {0});
  typed_initializer(m, "w", onnx::TensorProto::INT8, {1, 1, 1, 1}, {3});
  m.initializer("ws", {}, {0.5f});
  typed_initializer(m, "wz", onnx::TensorProto::INT8, {}, {0});
  m.initializer("ys", {}, {0.25f});
  typed_initializer(m, "yz", onnx::TensorProto::UINT8, {}, {0});
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  m.node("QLinearConv", {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"yq"});
  m.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  auto g = optimized_graph(m.bytes(), pass_list(make_qoperator_rewrite()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "QLinearConv"), 1) << dump_graph(*g);
}

// x float [3, 6] -> QuantizeLinear -> com.microsoft QGemm (int8 B [4, 6] with transB, per-column
// scales, int32 C) [-> DequantizeLinear when quantized] -> y.
ModelBuilder qgemm(bool quantized) {
  ModelBuilder m(13);
  auto* ms = m.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  m.input("x", kF, {3, 6}).output("y");
  m.initializer("xs", {}, {0.02f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {128});
  std::vector<int> b;
  for (int i = 0; i < 24; ++i) b.push_back((i * 37) % 255 - 127);
  typed_initializer(m, "b", onnx::TensorProto::INT8, {4, 6}, b);
  m.initializer("bs", {4}, {0.01f, 0.02f, 0.015f, 0.03f});
  typed_initializer(m, "bz", onnx::TensorProto::INT8, {4}, {0, 0, 0, 0});
  typed_initializer(m, "c", onnx::TensorProto::INT32, {4}, {100, -250, 40, 0});
  m.initializer("ys", {}, {0.04f});
  typed_initializer(m, "yz", onnx::TensorProto::UINT8, {}, {100});
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  std::vector<std::string> in = {"xq", "xs", "xz", "b", "bs", "bz", "c"};
  if (quantized) in.insert(in.end(), {"ys", "yz"});
  auto& g = m.node("QGemm", in, {quantized ? "yq" : "y"});
  g.set_domain("com.microsoft");
  auto* tb = g.add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  auto* alpha = g.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  if (quantized) m.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  return m;
}

TEST(QOperatorRewriteTest, QGemmBecomesTheInt8MatMulWithinOneStep) {
  for (bool quantized : {true, false}) {
    SCOPED_TRACE(quantized ? "quantized output" : "float output");
    ModelBuilder m = qgemm(quantized);
    const std::vector<NamedTensor> in = {{"x", ramp({3, 6}, -2.3f, 0.27f)}};
    auto before = import_graph(m.bytes());
    auto after = optimized_graph(m.bytes(), pass_list(make_qoperator_rewrite()));
    ASSERT_TRUE(before && after);
    const std::string d = dump_graph(*after);
    EXPECT_EQ(count_op(*after, "com.osprey.MatMulIntegerToFloat"), 1) << d;
    EXPECT_EQ(count_op(*after, "com.microsoft.QGemm"), 0) << d;
    const Tensor want = run_graph(*before, in)[0], got = run_graph(*after, in)[0];
    ASSERT_EQ(want.shape(), got.shape());
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(want.data<float>()[i] - got.data<float>()[i])));
      largest = std::max(largest, static_cast<double>(std::fabs(want.data<float>()[i])));
    }
    EXPECT_GT(largest, 0.5);
    EXPECT_LE(worst, quantized ? 0.04 * 1.001 : 1e-5 * largest) << d;
  }
}

// x [2, 5, 16] (and z [2, 16, 3] when B is computed) -> QuantizeLinear -> QLinearMatMul -> yq
// (the bytes). B constant: [16, 3] of `b_type`, scales one value or one per column.
ModelBuilder qlinear_matmul(int b_type, bool per_column, bool computed_b) {
  ModelBuilder m(13);
  m.input("x", kF, {2, 5, 16});
  if (computed_b) m.input("z", kF, {2, 16, 3});
  m.output("yq");
  m.initializer("xs", {}, {0.021f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {131});
  const bool s8 = b_type == onnx::TensorProto::INT8;
  if (computed_b) {
    m.initializer("bs", {}, {0.017f});
    typed_initializer(m, "bz", b_type, {}, {s8 ? -3 : 120});
    m.node("QuantizeLinear", {"z", "bs", "bz"}, {"b"});
  } else {
    std::vector<int> b;
    for (int i = 0; i < 48; ++i) b.push_back(s8 ? (i * 37) % 255 - 127 : (i * 53) % 256);
    typed_initializer(m, "b", b_type, {16, 3}, b);
    if (per_column) {
      m.initializer("bs", {3}, {0.011f, 0.023f, 0.0137f});
      typed_initializer(m, "bz", b_type, {3}, s8 ? std::vector<int>{0, 2, -5} : std::vector<int>{128, 120, 131});
    } else {
      m.initializer("bs", {}, {0.013f});
      typed_initializer(m, "bz", b_type, {}, {s8 ? 1 : 126});
    }
  }
  m.initializer("ys", {}, {0.047f});
  typed_initializer(m, "yz", onnx::TensorProto::UINT8, {}, {97});
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  m.node("QLinearMatMul", {"xq", "xs", "xz", "b", "bs", "bz", "ys", "yz"}, {"yq"});
  return m;
}

TEST(QOperatorRewriteTest, QLinearMatMulWithConstantBBecomesTheInt8MatMulBitForBit) {
  for (int b_type : {int{onnx::TensorProto::INT8}, int{onnx::TensorProto::UINT8}})
    for (bool per_column : {false, true})
      for (bool computed_b : {false, true}) {
        if (computed_b && per_column) continue;
        SCOPED_TRACE(std::string(b_type == onnx::TensorProto::INT8 ? "int8" : "uint8") + " B" +
                     (per_column ? ", per column" : "") + (computed_b ? ", computed" : ""));
        ModelBuilder m = qlinear_matmul(b_type, per_column, computed_b);
        std::vector<NamedTensor> in = {{"x", ramp({2, 5, 16}, -1.0f, 0.19f)}};
        if (computed_b) in.push_back({"z", ramp({2, 16, 3}, -0.25f, 0.05f)});
        auto before = import_graph(m.bytes());
        auto after = optimized_graph(m.bytes(), pass_list(make_qoperator_rewrite()));
        ASSERT_TRUE(before && after);
        const std::string d = dump_graph(*after);
        EXPECT_EQ(count_op(*after, "com.osprey.MatMulIntegerToFloat"), computed_b ? 0 : 1) << d;
        EXPECT_EQ(count_op(*after, "QLinearMatMul"), computed_b ? 1 : 0) << d;
        const Tensor want = run_graph(*before, in)[0], got = run_graph(*after, in)[0];
        ASSERT_EQ(want.shape(), got.shape());
        ASSERT_EQ(got.dtype(), DType::kUInt8);
        std::set<int> seen;
        for (int64_t i = 0; i < want.numel(); ++i) {
          EXPECT_EQ(want.data<uint8_t>()[i], got.data<uint8_t>()[i]) << "element " << i << "\n" << d;
          seen.insert(got.data<uint8_t>()[i]);
        }
        EXPECT_GT(seen.size(), 8u);  // the values spread over the range
      }
}

TEST(QOperatorRewriteTest, MicrosoftQLinearAddOfOneShapeBecomesOurs) {
  for (bool broadcast : {false, true}) {
    SCOPED_TRACE(broadcast ? "broadcast" : "one shape");
    ModelBuilder m(13);
    auto* ms = m.proto().add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    const std::vector<int64_t> z_dims = broadcast ? std::vector<int64_t>{1, 4, 1, 1} : std::vector<int64_t>{1, 4, 3, 3};
    m.input("x", kF, {1, 4, 3, 3}).input("z", kF, z_dims).output("y");
    m.initializer("sa", {}, {0.02f});
    m.initializer("sb", {}, {0.03f});
    m.initializer("sy", {}, {0.05f});
    typed_initializer(m, "za", onnx::TensorProto::UINT8, {}, {128});
    typed_initializer(m, "zb", onnx::TensorProto::UINT8, {}, {100});
    typed_initializer(m, "zy", onnx::TensorProto::UINT8, {}, {90});
    m.node("QuantizeLinear", {"x", "sa", "za"}, {"xq"});
    m.node("QuantizeLinear", {"z", "sb", "zb"}, {"zq"});
    m.node("QLinearAdd", {"xq", "sa", "za", "zq", "sb", "zb", "sy", "zy"}, {"yq"}).set_domain("com.microsoft");
    m.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
    const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 3, 3}, -1.0f, 0.061f)}, {"z", ramp(z_dims, 0.7f, -0.09f)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qoperator_rewrite()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearAdd"), broadcast ? 0 : 1) << dump_graph(*g);
    EXPECT_EQ(count_op(*g, "com.microsoft.QLinearAdd"), broadcast ? 1 : 0) << dump_graph(*g);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
