// A dynamically quantized convolution (onnxruntime's quantize_dynamic on a CNN): [Pad(0) ->]
// DynamicQuantizeLinear -> ConvInteger -> Cast(float) -> Mul(scale) -> Add(bias [1, M, 1, 1])
// [-> Clip]. pad_conv_fold moves the zero Pad into the convolution's pads (the quantized zeros
// are x_zero_point, which the convolution's own padding stands for); matmul_integer_fusion makes
// the rest one com.osprey ConvIntegerToFloat; channels_last runs it and the
// DynamicQuantizeLinear before it channels-last. Each step gives the same outputs, and the
// session's levels agree.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

constexpr int64_t kC = 4, kM = 6;

void add_cast_to_float(ModelBuilder& m, const std::string& from, const std::string& to) {
  auto& cast = m.node("Cast", {from}, {to});
  auto* a = cast.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(onnx::TensorProto::FLOAT);
}

// x [1, C, 7, 9] -> [Pad 0: H by (1, 0), W by (0, 1)] -> DynamicQuantizeLinear -> ConvInteger(3x3,
// pads 1 when not padded, int8 w) -> Cast -> Mul(x_scale * w_scale) -> Add(bias [1, M, 1, 1]) ->
// Clip(0, 6) -> y.
ModelBuilder dynamic_conv(bool pad) {
  ModelBuilder m(13);
  m.input("x", kF, {1, kC, 7, 9}).output("y");
  std::vector<int> w;
  for (int64_t i = 0; i < kM * kC * 9; ++i) w.push_back(static_cast<int>((i * 41) % 255) - 127);
  typed_initializer(m, "w", onnx::TensorProto::INT8, {kM, kC, 3, 3}, w);
  typed_initializer(m, "wz", onnx::TensorProto::INT8, {}, {0});
  m.initializer("ws", {}, {0.013f});
  m.initializer("bias", {1, kM, 1, 1}, cyclic_values(kM, -0.4f, 0.17f, 5));
  m.initializer("lo", {}, {0.0f});
  m.initializer("hi", {}, {6.0f});
  std::string x = "x";
  if (pad) {
    int64_initializer(m, "pads", {8}, {0, 0, 1, 0, 0, 0, 0, 1});
    m.node("Pad", {"x", "pads"}, {"xp"});
    x = "xp";
  }
  m.node("DynamicQuantizeLinear", {x}, {"xq", "xs", "xz"});
  auto& conv = m.node("ConvInteger", {"xq", "w", "xz", "wz"}, {"acc"});
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(pad ? 0 : 1);
  add_cast_to_float(m, "acc", "accf");
  m.node("Mul", {"xs", "ws"}, {"s"});
  m.node("Mul", {"accf", "s"}, {"scaled"});
  m.node("Add", {"scaled", "bias"}, {"biased"});
  m.node("Clip", {"biased", "lo", "hi"}, {"y"});
  return m;
}

std::string string_attr_of(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  return a ? a->s : "";
}

std::vector<int64_t> ints_attr_of(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  return a ? a->ints : std::vector<int64_t>{};
}

const std::vector<NamedTensor> kInputs = {{"x", ramp({1, kC, 7, 9}, -1.7f, 0.29f)}};

TEST(ConvIntegerPassesTest, TheChainBecomesOneFloatOutputConvolution) {
  ModelBuilder m = dynamic_conv(false);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_integer_fusion()), kInputs);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.ConvIntegerToFloat"), 1) << d;
  EXPECT_EQ(count_op(*g, "ConvInteger") + count_op(*g, "Cast") + count_op(*g, "Add") + count_op(*g, "Clip"), 0) << d;
  for (const auto& n : g->nodes)
    if (n.op_type == "ConvIntegerToFloat") {
      EXPECT_EQ(string_attr_of(n, "activation"), "Clip") << d;
      EXPECT_EQ(ints_attr_of(n, "pads"), (std::vector<int64_t>{1, 1, 1, 1})) << d;  // kept
    }
  expect_session_levels_agree(m.bytes(), kInputs, 2);
}

TEST(ConvIntegerPassesTest, AZeroPadBeforeTheDynamicQuantizationFoldsIntoTheConvolution) {
  ModelBuilder m = dynamic_conv(true);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), kInputs);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "Pad"), 0) << d;
  for (const auto& n : g->nodes)
    if (n.op_type == "ConvInteger") EXPECT_EQ(ints_attr_of(n, "pads"), (std::vector<int64_t>{1, 0, 0, 1})) << d;
  expect_session_levels_agree(m.bytes(), kInputs, 2);
}

TEST(ConvIntegerPassesTest, ANonZeroPadStays) {
  ModelBuilder m = dynamic_conv(true);
  m.initializer("pad_value", {}, {0.5f});
  for (auto& n : *m.proto().mutable_graph()->mutable_node())
    if (n.op_type() == "Pad") n.add_input("pad_value");
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), kInputs);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Pad"), 1) << dump_graph(*g);
}

TEST(ConvIntegerPassesTest, TheFusedConvolutionRunsChannelsLast) {
  ModelBuilder m = dynamic_conv(true);
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(make_pad_conv_fold());
  passes.push_back(make_matmul_integer_fusion());
  passes.push_back(make_channels_last());
  auto before = import_graph(m.bytes());
  auto g = optimized_graph(m.bytes(), std::move(passes));
  ASSERT_TRUE(before && g);
  const std::string d = dump_graph(*g);
  int converted = 0;
  for (const auto& n : g->nodes)
    if (n.op_type == "ConvIntegerToFloat") converted += n.find_attribute("channels_last") && n.find_attribute("channels_last")->i == 1;
  EXPECT_EQ(converted, 1) << d;
  const Tensor want = run_graph(*before, kInputs)[0], got = run_graph(*g, kInputs)[0];
  expect_close(got, want, "y");
}

// uint8 x [1, C, 6, 6] -> Pad(value) -> ConvInteger(x_zero_point 128): the Pad folds only when
// it pads with the zero point, which is what the convolution's own padding stands for.
TEST(ConvIntegerPassesTest, ABytePadFoldsOnlyWhenItPadsWithTheZeroPoint) {
  for (int pad_value : {128, 0}) {
    SCOPED_TRACE("pad value " + std::to_string(pad_value));
    ModelBuilder m(13);
    m.input("x", onnx::TensorProto::UINT8, {1, kC, 6, 6}).output("y");
    std::vector<int> w;
    for (int64_t i = 0; i < kM * kC * 9; ++i) w.push_back(static_cast<int>((i * 41) % 255) - 127);
    typed_initializer(m, "w", onnx::TensorProto::INT8, {kM, kC, 3, 3}, w);
    typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {128});
    typed_initializer(m, "pv", onnx::TensorProto::UINT8, {}, {pad_value});
    int64_initializer(m, "pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    m.node("Pad", {"x", "pads", "pv"}, {"xp"});
    m.node("ConvInteger", {"xp", "w", "xz"}, {"y"});
    Tensor x(DType::kUInt8, {1, kC, 6, 6});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37) % 256);
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), {{"x", x}});
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "Pad"), pad_value == 128 ? 0 : 1) << dump_graph(*g);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
