// pad_conv_fold: a zero Pad of the spatial dims before a Conv becomes the Conv's pads; other
// Pads (channel padding, a non-zero value, reflect mode, a shared output) stay. Before a
// QLinearConv: a Pad of its x_zero_point, and a float zero Pad before the QuantizeLinear that
// feeds it, fold the same way; a Pad of another value stays.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  return cyclic_values(n, start, step, 5);
}

void ints(onnx::NodeProto& n, const char* name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

TEST(PadConvFoldTest, SpatialZeroPadBecomesConvPads) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2, 5, 6}).output("y");
  m.initializer("W", {3, 2, 3, 3}, values(54, -0.2f, 0.09f));
  int64_initializer(m, "pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1});
  m.initializer("zero", {}, {0.0f});
  m.node("Pad", {"x", "pads", "zero"}, {"p"});
  ints(m.node("Conv", {"p", "W"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 5, 6})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "Pad"), 0) << d;
  EXPECT_NE(d.find("Conv 'conv': x, W -> y  pads=[2,3,3,2]"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 1);
}

// x -> Pad(float, value) -> QuantizeLinear -> QLinearConv -> DequantizeLinear -> y, or with
// the Pad after the QuantizeLinear (a uint8 Pad of `value`).
ModelBuilder quantized_pad_conv(bool pad_before_quantize, int value) {
  ModelBuilder m(13);
  m.input("x", kF, {1, 2, 5, 6}).output("y");
  int64_initializer(m, "pads", {8}, {0, 0, 1, 0, 0, 0, 1, 2});
  m.initializer("xs", {}, {0.02f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {128});
  std::vector<int> w;
  for (int i = 0; i < 3 * 2 * 9; ++i) w.push_back((i * 41) % 200 - 100);
  typed_initializer(m, "w", onnx::TensorProto::INT8, {3, 2, 3, 3}, w);
  m.initializer("ws", {}, {0.01f});
  typed_initializer(m, "wz", onnx::TensorProto::INT8, {}, {0});
  m.initializer("ys", {}, {0.05f});
  typed_initializer(m, "yz", onnx::TensorProto::UINT8, {}, {100});
  if (pad_before_quantize) {
    m.initializer("value", {}, {static_cast<float>(value)});
    m.node("Pad", {"x", "pads", "value"}, {"p"});
    m.node("QuantizeLinear", {"p", "xs", "xz"}, {"xq"});
  } else {
    typed_initializer(m, "value", onnx::TensorProto::UINT8, {}, {value});
    m.node("QuantizeLinear", {"x", "xs", "xz"}, {"q"});
    m.node("Pad", {"q", "pads", "value"}, {"xq"});
  }
  m.node("QLinearConv", {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"yq"}, "conv");
  m.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  return m;
}

TEST(PadConvFoldTest, PadsOfTheQuantizedZeroFoldIntoQLinearConv) {
  struct Case {
    bool before_quantize;
    int value;
    bool folds;
  };
  for (const Case& c : {Case{true, 0, true}, Case{false, 128, true}, Case{false, 0, false}, Case{true, 1, false}}) {
    SCOPED_TRACE(std::string(c.before_quantize ? "float Pad of " : "uint8 Pad of ") + std::to_string(c.value));
    ModelBuilder m = quantized_pad_conv(c.before_quantize, c.value);
    const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 5, 6}, -1.3f, 0.21f)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), in);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    EXPECT_EQ(count_op(*g, "Pad"), c.folds ? 0 : 1) << d;
    if (c.folds) EXPECT_NE(d.find("pads=[1,0,1,2]"), std::string::npos) << d;
    expect_session_levels_agree(m.bytes(), in, 1);  // (level 2's int8 primitive may round a value the other way)
  }
}

TEST(PadConvFoldTest, LeavesPadsThatAreNotASpatialZeroPadding) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).output("a").output("b").output("c").output("d");
  m.initializer("W", {2, 2, 1, 1}, values(4, 0.3f, 0.1f));
  m.initializer("W3", {2, 3, 1, 1}, values(6, 0.3f, 0.1f));
  int64_initializer(m, "spatial", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  int64_initializer(m, "channel", {8}, {0, 1, 0, 0, 0, 0, 0, 0});
  m.initializer("one", {}, {1.0f});
  m.node("Pad", {"x", "channel"}, {"p1"});
  m.node("Conv", {"p1", "W3"}, {"a"});  // pads a channel
  m.node("Pad", {"x", "spatial", "one"}, {"p2"});
  m.node("Conv", {"p2", "W"}, {"b"});  // pads with 1
  auto& reflect = m.node("Pad", {"x", "spatial"}, {"p3"});
  auto* mode = reflect.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("reflect");
  m.node("Conv", {"p3", "W"}, {"c"});
  m.node("Pad", {"x", "spatial"}, {"p4"});
  m.node("Conv", {"p4", "W"}, {"d"});
  m.node("Relu", {"p4"}, {"unused"});  // p4 has another reader
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Pad"), 4) << dump_graph(*g);
}

}  // namespace
}  // namespace osprey::passes::testing
