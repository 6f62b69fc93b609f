// apply_winograd (SessionOptions::winograd): which convolutions get the winograd attribute
// (float32, constant 3x3 weights, one group, stride 1, dilation 1; not fast mode's bf16 ones,
// not at level 0), and a session with Winograd agrees with one without it.
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_winograd_nhwc.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "passes/compute_precision.h"
#include "passes/conv_algorithm.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

void conv(ModelBuilder& m, const std::string& x, const std::string& y, int64_t c, int64_t k,
          std::vector<int64_t> strides, std::vector<int64_t> dilations, int64_t group) {
  const std::string w = "W_" + y;
  m.initializer(w, {c, c / group, k, k},
                cyclic_values(static_cast<size_t>(c * (c / group) * k * k), -0.05f, 0.0013f, 97));
  auto& n = m.node("Conv", {x, w}, {y}, "conv_" + y);
  auto ints = [&](const char* name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  };
  ints("pads", std::vector<int64_t>(4, (k / 2) * dilations[0]));
  ints("strides", strides);
  ints("dilations", dilations);
  auto* g = n.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(group);
}

// `c` channels on [1, c, 10, 10]: a 3x3 stride-1 convolution with Relu (the eligible one), then
// a 3x3 of stride 2, a 1x1, a depthwise 3x3 and a dilated 3x3.
std::string model(int64_t c = 64) {
  ModelBuilder m;
  m.input("x", kF, {1, c, 10, 10}).output("y");
  conv(m, "x", "a", c, 3, {1, 1}, {1, 1}, 1);
  m.node("Relu", {"a"}, {"ar"});
  conv(m, "ar", "b", c, 3, {2, 2}, {1, 1}, 1);
  conv(m, "b", "c", c, 1, {1, 1}, {1, 1}, 1);
  conv(m, "c", "d", c, 3, {1, 1}, {1, 1}, c);
  conv(m, "d", "y", c, 3, {1, 1}, {2, 2}, 1);
  return m.bytes();
}

const std::vector<NamedTensor> kIn = {{"x", ramp({1, 64, 10, 10}, -1.0f, 0.0007f)}};

std::string optimized_dump(Winograd policy, int level = 2, int64_t channels = 64) {
  auto g = import_graph(model(channels));
  if (!g) return "";
  SessionOptions o;
  o.winograd = policy;
  o.optimization_level = level;
  Status s = optimize(*g, o);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return dump_graph(*g);
}

TEST(ConvAlgorithmTest, MarksOnlyFloat3x3Stride1OneGroupConvolutions) {
  const std::string d = optimized_dump(Winograd::kAuto);
  EXPECT_EQ(count_occurrences(d, "winograd=1"), 1) << d;
  EXPECT_EQ(count_occurrences(d, "winograd="), 1) << d;
  // The marked one is the first convolution (fused with its Relu).
  const size_t at = d.find("winograd=1");
  ASSERT_NE(at, std::string::npos);
  const size_t line = d.rfind('\n', at);
  EXPECT_NE(d.substr(line, at - line).find("-> ar"), std::string::npos) << d;
  const std::string on = optimized_dump(Winograd::kOn);
  EXPECT_EQ(count_occurrences(on, "winograd=2"), 1) << on;
  EXPECT_EQ(count_occurrences(optimized_dump(Winograd::kOff), "winograd"), 0);
  EXPECT_EQ(count_occurrences(optimized_dump(Winograd::kOn, 0), "winograd"), 0);
  EXPECT_EQ(count_occurrences(optimized_dump(Winograd::kOn, 1), "winograd=2"), 1);
}

// Auto marks only convolutions with at least kWinogradMinChannels in and out; on marks all.
TEST(ConvAlgorithmTest, AutoNeedsEnoughChannels) {
  const int64_t few = cpu::kWinogradMinChannels / 2;
  EXPECT_EQ(count_occurrences(optimized_dump(Winograd::kAuto, 2, few), "winograd"), 0);
  EXPECT_EQ(count_occurrences(optimized_dump(Winograd::kOn, 2, few), "winograd=2"), 1);
}

// compute_precision = "bf16" (fast mode) keeps a convolution direct; an explicit "fp32" does not.
TEST(ConvAlgorithmTest, LeavesBf16ConvolutionsAlone) {
  for (const char* precision : {"bf16", "fp32"}) {
    SCOPED_TRACE(precision);
    auto g = import_graph(model());
    ASSERT_TRUE(g);
    ir::Attribute attr;
    attr.type = ir::Attribute::Type::kString;
    attr.s = precision;
    for (auto& n : g->nodes)
      if (n.op_type == "Conv") n.attributes[kComputePrecisionAttr] = attr;
    const int want = std::string(precision) == "fp32" ? 1 : 0;
    EXPECT_EQ(apply_winograd(*g, Winograd::kOn, 2), want);
    EXPECT_EQ(count_occurrences(dump_graph(*g), "winograd=2"), want);
  }
}

TEST(ConvAlgorithmTest, SessionsWithAndWithoutWinogradAgree) {
  SessionOptions on, off;
  on.winograd = Winograd::kOn;
  on.threads = off.threads = 1;
  off.winograd = Winograd::kOff;
  const int64_t before = cpu::winograd_convolutions_built(), ours = cpu::winograd_nhwc_convolutions_run();
  auto s_on = Session::load_from_bytes(model(), on);
  ASSERT_TRUE(s_on.ok()) << s_on.status().to_string();
  auto r_on = (*s_on)->run(kIn);
  ASSERT_TRUE(r_on.ok()) << r_on.status().to_string();
  // oneDNN's Winograd primitives built, and runs of our own form (conv_winograd_nhwc.h).
  const int64_t built = cpu::winograd_convolutions_built() - before,
                ran_ours = cpu::winograd_nhwc_convolutions_run() - ours;
  auto s_off = Session::load_from_bytes(model(), off);
  ASSERT_TRUE(s_off.ok()) << s_off.status().to_string();
  // The sessions say what their policy marked (bench --peak reports it).
  EXPECT_EQ((*s_on)->optimization_marks().winograd_nodes, 1);
  EXPECT_EQ((*s_off)->optimization_marks().winograd_nodes, 0);
  EXPECT_EQ((*s_on)->optimization_marks().bf16_nodes, 0);
  auto r_off = (*s_off)->run(kIn);
  ASSERT_TRUE(r_off.ok()) << r_off.status().to_string();
  EXPECT_EQ(cpu::winograd_convolutions_built() - before, built) << "winograd off built some";
  EXPECT_EQ(cpu::winograd_nhwc_convolutions_run() - ours, ran_ours) << "winograd off ran our form";
  // Where oneDNN has Winograd kernels (AVX-512) the marked convolution ran a Winograd algorithm.
  if (cpu::avx512_kernels_available()) {
    EXPECT_GE(built + ran_ours, 1);
  }
  const Tensor& a = (*r_on)[0].second;
  const Tensor& b = (*r_off)[0].second;
  ASSERT_EQ(a.shape(), b.shape());
  double scale = 1, worst = 0;
  for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, std::fabs(b.get_as_double(i)));
  for (int64_t i = 0; i < b.numel(); ++i)
    worst = std::max(worst, std::fabs(a.get_as_double(i) - b.get_as_double(i)));
  EXPECT_LE(worst, 1e-5 * scale);
}

}  // namespace
}  // namespace osprey::passes::testing
