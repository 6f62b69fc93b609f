// qdq_conv_fusion: a QDQ-quantized convolution (DequantizeLinear of x and of int8 weights ->
// Conv [-> Relu | Clip] -> QuantizeLinear) becomes one com.osprey QLinearConv with the
// activation as its attribute, the bias dequantized into float32; outputs stay within one
// quantization step of the graph as imported (the fused op sums in exact int32 where the
// float graph rounds). What does not match (a shared Conv output, per-axis x parameters)
// stays as it is.
#include "kernels/cpu/cpu_capabilities.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

void typed_initializer(ModelBuilder& m, const std::string& name, int type, std::vector<int64_t> dims,
                       const std::vector<int32_t>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int32_data(v);
}

struct Form {
  std::string act;         // "", "Relu", "Clip"
  bool per_channel = true;  // weights' scale per output channel
  bool bias = true;         // an int32 bias through DequantizeLinear
  bool signed_y = false;    // int8 output
  bool shared = false;      // the Conv's output also read by another node (no fusion)
};

// x (float) -> Q -> DQ -> Conv(DQ(w_q), DQ(b_q)) [-> act] -> Q -> y (uint8 or int8).
ModelBuilder qdq_conv(const Form& f) {
  ModelBuilder m(13);
  m.input("x", kF, {1, 4, 6, 6}).output("y", f.signed_y ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
  if (f.shared) m.output("c_copy");
  m.initializer("sx", {}, {0.02f});
  typed_initializer(m, "zx", onnx::TensorProto::UINT8, {}, {128});
  std::vector<int32_t> w;
  for (int i = 0; i < 6 * 4 * 9; ++i) w.push_back((i * 37) % 255 - 127);
  typed_initializer(m, "wq", onnx::TensorProto::INT8, {6, 4, 3, 3}, w);
  std::vector<float> sw = {0.004f, 0.003f, 0.005f, 0.0025f, 0.006f, 0.0035f};
  if (!f.per_channel) sw = {0.004f};
  m.initializer("sw", {static_cast<int64_t>(sw.size())}, sw);
  typed_initializer(m, "zw", onnx::TensorProto::INT8, {static_cast<int64_t>(sw.size())},
                    std::vector<int32_t>(sw.size(), 0));
  std::vector<float> sb;
  for (float s : sw) sb.push_back(0.02f * s);
  m.initializer("sb", {static_cast<int64_t>(sb.size())}, sb);
  typed_initializer(m, "bq", onnx::TensorProto::INT32, {6}, {100, -250, 3000, 0, -40, 777});
  m.initializer("sy", {}, {0.05f});
  typed_initializer(m, "zy", f.signed_y ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8, {},
                    {f.signed_y ? -7 : 3});
  m.initializer("lo", {}, {0.0f});
  m.initializer("hi", {}, {6.0f});
  m.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
  auto& wdq = m.node("DequantizeLinear", {"wq", "sw", "zw"}, {"wd"});
  auto* axis = wdq.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  std::vector<std::string> conv_in = {"xd", "wd"};
  if (f.bias) {
    auto& bdq = m.node("DequantizeLinear", {"bq", f.per_channel ? "sb" : "sb"}, {"bd"});
    auto* ba = bdq.add_attribute();
    ba->set_name("axis");
    ba->set_type(onnx::AttributeProto::INT);
    ba->set_i(0);
    conv_in.push_back("bd");
  }
  auto& conv = m.node("Conv", conv_in, {"c"}, "conv");
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  std::string y = "c";
  if (f.act == "Relu") m.node("Relu", {"c"}, {"a"}), y = "a";
  if (f.act == "Clip") m.node("Clip", {"c", "lo", "hi"}, {"a"}), y = "a";
  if (f.shared) m.node("Identity", {"c"}, {"c_copy"});
  m.node("QuantizeLinear", {y, "sy", "zy"}, {"y"});
  return m;
}

// Expects a and b (uint8 or int8) within one step everywhere, and differing in few elements.
void expect_within_one_step(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  int64_t differ = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const int64_t d = std::abs(static_cast<int64_t>(a.get_as_double(i)) - static_cast<int64_t>(b.get_as_double(i)));
    EXPECT_LE(d, 1) << "element " << i;
    differ += d != 0;
  }
  EXPECT_LE(differ, a.numel() / 50) << differ << " of " << a.numel() << " elements differ";
}

const std::vector<NamedTensor> kIn = {{"x", ramp({1, 4, 6, 6}, -2.0f, 0.037f)}};

// Fuses on every machine (without VNNI the fused node runs on the reference kernel).
struct ForceFusion {
  ForceFusion() { force_qdq_conv_fusion(true); }
  ~ForceFusion() { force_qdq_conv_fusion(false); }
};

TEST(QdqConvFusionTest, QuantizedConvolutionsBecomeOneInt8Node) {
  ForceFusion force;
  for (const Form& f : {Form{"Relu", true, true, false}, Form{"", true, true, false},
                        Form{"Clip", false, false, true}, Form{"", false, true, true}}) {
    SCOPED_TRACE("act '" + f.act + "' per_channel " + std::to_string(f.per_channel) + " bias " +
                 std::to_string(f.bias) + " signed " + std::to_string(f.signed_y));
    ModelBuilder m = qdq_conv(f);
    auto before = import_graph(m.bytes());
    auto after = optimized_graph(m.bytes(), pass_list(make_qdq_conv_fusion()));
    ASSERT_TRUE(before && after);
    const std::string d = dump_graph(*after);
    EXPECT_EQ(count_op(*after, "com.osprey.QLinearConv"), 1) << d;
    EXPECT_EQ(count_op(*after, "Conv"), 0) << d;
    EXPECT_EQ(count_op(*after, "QuantizeLinear"), 1) << d;  // x's; y's is the fused node's
    EXPECT_EQ(count_op(*after, "Relu") + count_op(*after, "Clip"), 0) << d;
    if (!f.act.empty()) EXPECT_NE(d.find("activation=\"" + f.act + "\""), std::string::npos) << d;
    const auto want = run_graph(*before, kIn);
    const auto got = run_graph(*after, kIn);
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    expect_within_one_step(got[0], want[0]);
    // The whole pipeline on the CPU kernels (channels-last, oneDNN's int8 convolution).
    SessionOptions o0, o2;
    o0.optimization_level = 0;
    o2.optimization_level = 2;
    auto s0 = Session::load_from_bytes(m.bytes(), o0);
    auto s2 = Session::load_from_bytes(m.bytes(), o2);
    ASSERT_TRUE(s0.ok() && s2.ok());
    auto r0 = (*s0)->run(kIn);
    auto r2 = (*s2)->run(kIn);
    ASSERT_TRUE(r0.ok() && r2.ok()) << (r0.ok() ? r2.status().to_string() : r0.status().to_string());
    expect_within_one_step((*r2)[0].second, (*r0)[0].second);
  }
}

TEST(QdqConvFusionTest, SharedOutputsAndPerAxisInputsStay) {
  ForceFusion force;
  {
    ModelBuilder m = qdq_conv(Form{"", true, true, false, true});
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_conv_fusion()), kIn);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearConv"), 0) << dump_graph(*g);
  }
  {
    // x dequantized per axis: not a form the fused op takes.
    ModelBuilder m = qdq_conv(Form{});
    auto* graph = m.proto().mutable_graph();
    for (auto& init : *graph->mutable_initializer())
      if (init.name() == "sx") {
        init.clear_dims();
        init.add_dims(4);
        init.clear_float_data();
        for (int i = 0; i < 4; ++i) init.add_float_data(0.02f);
      } else if (init.name() == "zx") {
        init.add_dims(4);
        for (int i = 0; i < 3; ++i) init.add_int32_data(128);
      }
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_conv_fusion()), kIn);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearConv"), 0) << dump_graph(*g);
  }
}

}  // namespace
}  // namespace osprey::passes::testing

namespace osprey::passes::testing {
namespace {

TEST(QdqConvFusionTest, FusesOnlyWhereTheInt8KernelsHaveVnni) {
  ModelBuilder m = qdq_conv(Form{"Relu", true, true, false});
  auto g = optimized_graph(m.bytes(), pass_list(make_qdq_conv_fusion()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "com.osprey.QLinearConv"), cpu::int8_vnni_available() ? 1 : 0) << dump_graph(*g);
}

}  // namespace
}  // namespace osprey::passes::testing
