// channels_blocked: a region of connected channels-last convolutions (multiples of 8 channels,
// one group, constant weights) moves to the blocked layout [N, C/8, H, W, 8], with one
// conversion per value entering or leaving it; outputs are unchanged, ineligible convolutions
// stay channels-last, and SessionOptions::blocked_layout = kAuto converts only regions large
// enough to pay, and only where oneDNN has no AVX-512 kernels.
#include "kernels/cpu/cpu_capabilities.h"
#include "passes/shape_inference.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  return cyclic_values(n, start, step, 11);
}

void conv(ModelBuilder& m, const std::string& x, const std::string& y, int64_t c, int64_t mo,
          int64_t k, int64_t group = 1) {
  const std::string w = "W_" + y;
  m.initializer(w, {mo, c / group, k, k},
                values(static_cast<size_t>(mo * (c / group) * k * k), -0.2f, 0.013f));
  auto& n = m.node("Conv", {x, w}, {y}, "conv_" + y);
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(k / 2);
  auto* g = n.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(group);
}

// A bottleneck block: 1x1 reduce, 3x3, 1x1 expand plus the block's input, Relu.
void block(ModelBuilder& m, const std::string& x, const std::string& y, int64_t c) {
  conv(m, x, y + "_a", c, 8, 1);
  m.node("Relu", {y + "_a"}, {y + "_ar"});
  conv(m, y + "_ar", y + "_b", 8, 8, 3);
  m.node("Relu", {y + "_b"}, {y + "_br"});
  conv(m, y + "_br", y + "_c", 8, c, 1);
  m.node("Add", {y + "_c", x}, {y + "_s"});
  m.node("Relu", {y + "_s"}, {y});
}

// `blocks` bottleneck blocks on a [2, 16, 6, 6] input.
std::string resnet_like(int blocks, bool middle_is_output = false) {
  ModelBuilder m;
  m.input("x", kF, {-1, 16, 6, 6}).output("y");
  if (middle_is_output) m.output("y1");
  std::string prev = "x";
  for (int i = 1; i <= blocks; ++i) {
    const std::string y = i == blocks ? "y" : "y" + std::to_string(i);
    block(m, prev, y, 16);
    prev = y;
  }
  return m.bytes();
}

std::vector<std::unique_ptr<Pass>> layout_passes() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_conv_add_fusion());
  v.push_back(make_conv_activation_fusion());
  v.push_back(make_channels_last());
  v.push_back(make_channels_blocked());
  v.push_back(make_dead_code_elimination());
  return v;
}

const std::vector<NamedTensor> kIn = {{"x", ramp({2, 16, 6, 6}, -1.0f, 0.013f)}};

TEST(ChannelsBlockedTest, RegionConvertsWithOneConversionInAndOneOut) {
  const std::string bytes = resnet_like(3);
  auto g = expect_pass_preserves(bytes, layout_passes(), kIn, BlockedLayout::kOn);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_blocked=8"), 9) << d;
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 0) << d;
  // x: NCHW -> NHWC -> blocked; y: blocked -> NHWC -> NCHW.
  EXPECT_EQ(count_op(*g, "Reshape"), 2) << d;
  EXPECT_EQ(count_op(*g, "Transpose"), 4) << d;
  EXPECT_NE(d.find("x_nChw8c_split -> x_nChw8c  perm=[0,3,1,2,4]"), std::string::npos) << d;
  EXPECT_NE(d.find("int64[5]{0,0,0,2,8}"), std::string::npos) << d;
  EXPECT_NE(d.find("-> y_nChw8c_split  perm=[0,2,3,1,4]"), std::string::npos) << d;
  // The residual reads the block input's blocked twin.
  EXPECT_NE(d.find("W_y1_c, \"\", x_nChw8c -> y1_nChw8c"), std::string::npos) << d;
  // Shapes are inferred through the region: y1's twin is [batch, 16/8, 6, 6, 8].
  const ShapeFacts facts = infer_shapes(*g, false);
  bool found = false;
  for (size_t v = 0; v < g->values.size(); ++v) {
    if (g->values[v].name != "y1_nChw8c") continue;
    found = true;
    ASSERT_TRUE(facts.has_shape[v]);
    const SymShape& s = facts.shapes[v];
    ASSERT_EQ(s.size(), 5u);
    EXPECT_FALSE(s[0].fixed());
    for (size_t i = 1; i < 5; ++i) {
      ASSERT_TRUE(s[i].fixed()) << i;
      EXPECT_EQ(s[i].value, (std::vector<int64_t>{0, 2, 6, 6, 8})[i]) << i;
    }
  }
  EXPECT_TRUE(found) << d;
  expect_session_levels_agree(bytes, kIn, 2, BlockedLayout::kOn);
}

TEST(ChannelsBlockedTest, ValuesReadOutsideTheRegionComeBack) {
  // y1 is also a graph output: it leaves the region (blocked -> NHWC -> NCHW) and stays in it.
  const std::string bytes = resnet_like(2, /*middle_is_output=*/true);
  auto g = expect_pass_preserves(bytes, layout_passes(), kIn, BlockedLayout::kOn);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_blocked=8"), 6) << d;
  EXPECT_EQ(count_op(*g, "Reshape"), 3) << d;
  EXPECT_NE(d.find("y1_nChw8c -> y1_nChw8c_split  perm=[0,2,3,1,4]"), std::string::npos) << d;
  EXPECT_NE(d.find("y1_nChw8c, W_y_a"), std::string::npos) << d;  // the next block reads the twin
  expect_session_levels_agree(bytes, kIn, 2, BlockedLayout::kOn);
}

TEST(ChannelsBlockedTest, IneligibleConvolutionsStayChannelsLast) {
  // 12 input channels (not a multiple of 8), then a grouped 3x3: neither converts; the 1x1s
  // between 16 and 8 channels do.
  ModelBuilder m;
  m.input("x", kF, {1, 12, 6, 6}).output("y");
  conv(m, "x", "a", 12, 16, 3);
  conv(m, "a", "b", 16, 16, 3, 2);
  conv(m, "b", "c", 16, 8, 1);
  conv(m, "c", "y", 8, 16, 1);
  const std::vector<NamedTensor> in = {{"x", ramp({1, 12, 6, 6}, -1.0f, 0.02f)}};
  auto g = expect_pass_preserves(m.bytes(), layout_passes(), in, BlockedLayout::kOn);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_blocked=8"), 2) << d;
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 2) << d;
  EXPECT_NE(d.find("FusedConv 'conv_a': x_nhwc"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2, BlockedLayout::kOn);
}

TEST(ChannelsBlockedTest, NeverAndSmallRegionsUnderAutoLeaveTheGraph) {
  {
    auto g = optimized_graph(resnet_like(3), layout_passes(), BlockedLayout::kOff);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_occurrences(dump_graph(*g), "channels_blocked"), 0);
  }
  // One block: 3 convolutions, below the 4 a region needs, whatever the machine.
  auto g = optimized_graph(resnet_like(1), layout_passes(), BlockedLayout::kAuto);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_blocked"), 0) << d;
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 3) << d;
}

TEST(ChannelsBlockedTest, AutoConvertsLargeRegionsWhereThereIsNoAvx512) {
  // Three blocks: 9 convolutions for 2 conversions.
  const std::string bytes = resnet_like(3);
  auto g = optimized_graph(bytes, layout_passes(), BlockedLayout::kAuto);
  ASSERT_TRUE(g);
  const int expected = cpu::avx512_kernels_available() ? 0 : 9;
  EXPECT_EQ(count_occurrences(dump_graph(*g), "channels_blocked=8"), expected);
  expect_session_levels_agree(bytes, kIn, 2);
}

TEST(ChannelsBlockedTest, SessionOptionDecides) {
  const std::string bytes = resnet_like(1);  // 3 convolutions: auto leaves it on any machine
  for (const BlockedLayout layout : {BlockedLayout::kOn, BlockedLayout::kOff, BlockedLayout::kAuto}) {
    SessionOptions o;
    o.blocked_layout = layout;
    auto s = Session::load_from_bytes(bytes, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const int want = layout == BlockedLayout::kOn ? 3 : 0;
    EXPECT_EQ(count_occurrences((*s)->graph_dump(), "channels_blocked=8"), want);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
