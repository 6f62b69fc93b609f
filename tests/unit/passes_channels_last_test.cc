// channels_last: chains of 2-D float convolutions (and the element-wise ops and the global
// average pool between and after them) run channels-last, with one Transpose into the region
// and one out of it per boundary value; outputs are unchanged and every value keeps its name.
#include "passes/shape_inference.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  return cyclic_values(n, start, step, 7);
}

onnx::NodeProto& conv(ModelBuilder& m, const std::string& x, const std::string& w, const std::string& y,
                      int64_t group = 1) {
  auto& n = m.node("Conv", {x, w}, {y}, "conv_" + y);
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  auto* g = n.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(group);
  return n;
}

std::vector<std::unique_ptr<Pass>> with_fusions() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_conv_add_fusion());
  v.push_back(make_conv_activation_fusion());
  v.push_back(make_channels_last());
  v.push_back(make_dead_code_elimination());
  return v;
}

TEST(ChannelsLastTest, ConvChainHasOneTransposeInAndOneOut) {
  // x -> conv+relu -> depthwise conv -> (+ c1) -> relu -> GlobalAveragePool -> Flatten -> y
  ModelBuilder m;
  m.input("x", kF, {-1, 4, 6, 6}).output("y");
  m.initializer("W1", {8, 4, 3, 3}, values(288, -0.2f, 0.07f));
  m.initializer("W2", {8, 1, 3, 3}, values(72, 0.15f, -0.05f));
  conv(m, "x", "W1", "c1");
  m.node("Relu", {"c1"}, {"r1"});
  conv(m, "r1", "W2", "c2", 8);
  m.node("Add", {"c2", "r1"}, {"s"});
  m.node("Sigmoid", {"s"}, {"a"});
  m.node("Mul", {"a", "s"}, {"silu"});  // Silu: fused as the conv's activation
  m.node("GlobalAveragePool", {"silu"}, {"p"});
  m.node("Flatten", {"p"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 4, 6, 6})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.FusedConv"), 2) << d;
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 2) << d;
  EXPECT_EQ(count_op(*g, "Transpose"), 2) << d;  // x in, the pooled [N,1,1,C] out
  EXPECT_EQ(count_op(*g, "ReduceMean"), 1) << d;
  EXPECT_EQ(count_op(*g, "GlobalAveragePool"), 0) << d;
  EXPECT_NE(d.find("x -> x_nhwc  perm=[0,2,3,1]"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ChannelsLastTest, ScalarConstantOperandsStayInTheRegion) {
  // conv -> x * Clip(x + 3, 0, 6) / 6 (a decomposed HardSwish) -> conv: no Transpose between.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 6, 6}).output("y");
  m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
  m.initializer("W2", {4, 4, 3, 3}, values(144, 0.2f, -0.06f));
  m.initializer("three", {}, {3.0f});
  m.initializer("six", {1}, {6.0f});
  m.initializer("zero", {}, {0.0f});
  conv(m, "x", "W1", "c1");
  m.node("Add", {"c1", "three"}, {"a"});
  m.node("Clip", {"a", "zero", "six"}, {"cl"});
  m.node("Mul", {"c1", "cl"}, {"mu"});
  m.node("Div", {"mu", "six"}, {"hs"});
  conv(m, "hs", "W2", "y");
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 6, 6})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "Transpose"), 2) << d;  // x in, y out
  EXPECT_NE(d.find("c1_nhwc, three -> a_nhwc"), std::string::npos) << d;
  EXPECT_NE(d.find("mu_nhwc, six -> hs_nhwc"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ChannelsLastTest, NchwReadersAndGraphOutputsGetTheOriginalValueBack) {
  // c1 is a graph output and is read by AveragePool (stays NCHW) and by a second conv.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 8, 8}).output("c1").output("mp").output("c2");
  m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
  m.initializer("W2", {4, 4, 3, 3}, values(144, 0.2f, -0.06f));
  conv(m, "x", "W1", "c1");
  auto& mp = m.node("AveragePool", {"c1"}, {"mp"});
  auto* k = mp.add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto::INTS);
  k->add_ints(2);
  k->add_ints(2);
  conv(m, "c1", "W2", "c2");
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 8, 8})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  // In: x. Out: c1 once (shared by AveragePool and the output), c2.
  EXPECT_EQ(count_op(*g, "Transpose"), 3) << d;
  EXPECT_NE(d.find("c1_nhwc -> c1  perm=[0,3,1,2]"), std::string::npos) << d;
  EXPECT_NE(d.find("AveragePool 'AveragePool_mp': c1 -> mp"), std::string::npos) << d;
  EXPECT_NE(d.find("c1_nhwc, W2"), std::string::npos) << d;  // the second conv reads the twin
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ChannelsLastTest, LeavesBroadcastsOtherRanksAndGraphsWithoutConvs) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 5, 5}).input("b", kF, {1, 2, 1, 1}).input("v", kF, {1, 2, 7}).output("y").output("w");
  m.initializer("W", {2, 2, 3, 3}, values(36, -0.3f, 0.1f));
  m.initializer("W1", {2, 2, 3}, values(12, 0.1f, 0.2f));
  conv(m, "x", "W", "c");
  m.node("Add", {"c", "b"}, {"y"});  // a broadcast add: stays NCHW
  auto& c1 = m.node("Conv", {"v", "W1"}, {"w"});  // 1-D: not converted
  (void)c1;
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 5, 5})}, {"b", ramp({1, 2, 1, 1})}, {"v", ramp({1, 2, 7})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 1) << d;
  EXPECT_EQ(count_op(*g, "Conv"), 1) << d;  // the 1-D one
  EXPECT_NE(d.find("Add 'Add_y': c, b -> y"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2);

  ModelBuilder none;
  none.input("x", kF, {1, 2, 3, 3}).output("y");
  none.node("Relu", {"x"}, {"y"});
  auto g2 = optimized_graph(none.bytes(), pass_list(make_channels_last()));
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_op(*g2, "Transpose"), 0);
}

TEST(ChannelsLastTest, NodesWithAbsentOperandsAreLeftAlone) {
  // Omitted (empty-named) inputs and outputs on the ops the pass looks at: it must neither
  // convert them nor index past its tables (a fuzzed model once did).
  ModelBuilder m;
  m.input("x", kF, {1, 2, 5, 5}).output("c").output("y").output("s");
  m.initializer("W", {2, 2, 3, 3}, values(36, -0.3f, 0.1f));
  conv(m, "x", "W", "c");
  m.node("Clip", {"", ""}, {"y"}, "clip_absent_x");
  m.node("Add", {"c", ""}, {"s"}, "add_absent_b");
  m.node("Relu", {"c"}, {""}, "relu_absent_y");
  m.node("GlobalAveragePool", {""}, {""}, "pool_absent");
  auto g = optimized_graph(m.bytes(), pass_list(make_channels_last()));
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 1) << d;
  EXPECT_EQ(count_op(*g, "Clip"), 1) << d;
  EXPECT_EQ(count_op(*g, "Add"), 1) << d;
  EXPECT_EQ(count_op(*g, "Relu"), 1) << d;
  EXPECT_EQ(count_op(*g, "GlobalAveragePool"), 1) << d;
  EXPECT_NE(d.find("Add 'add_absent_b': c, "), std::string::npos) << d;
}

TEST(ChannelsLastTest, MaxPoolBetweenConvolutionsStaysChannelsLast) {
  // ResNet's stem: conv -> relu -> MaxPool 3x3/2 pad 1 -> conv; and a ceil_mode MaxPool, which
  // stays an ONNX MaxPool in NCHW.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 12, 12}).output("y").output("z");
  m.initializer("W1", {8, 3, 3, 3}, values(216, -0.2f, 0.05f));
  m.initializer("W2", {8, 8, 3, 3}, values(576, 0.1f, -0.03f));
  conv(m, "x", "W1", "c1");
  m.node("Relu", {"c1"}, {"r1"});
  auto& mp = m.node("MaxPool", {"r1"}, {"p"});
  auto add_ints = [](onnx::NodeProto& n, const char* name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  add_ints(mp, "kernel_shape", {3, 3});
  add_ints(mp, "strides", {2, 2});
  add_ints(mp, "pads", {1, 1, 1, 1});
  conv(m, "p", "W2", "y");
  auto& ceil = m.node("MaxPool", {"r1"}, {"z"}, "ceil_pool");
  add_ints(ceil, "kernel_shape", {2, 2});
  add_ints(ceil, "strides", {2, 2});
  auto* cm = ceil.add_attribute();
  cm->set_name("ceil_mode");
  cm->set_type(onnx::AttributeProto::INT);
  cm->set_i(1);
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 12, 12})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.MaxPool"), 1) << d;
  EXPECT_EQ(count_op(*g, "MaxPool"), 1) << d;  // the ceil_mode one
  // x in; y out; r1 back to NCHW for the ceil_mode pool. Nothing around the converted pool.
  EXPECT_EQ(count_op(*g, "Transpose"), 3) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

void set_string(onnx::NodeProto& n, const char* name, const char* v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

TEST(ChannelsLastTest, SqueezeExciteResizeAndConcatStayChannelsLast) {
  // An FPN level of a text detector: conv -> squeeze-excite (pool, two 1x1 convs, the scale
  // times the map) -> nearest Resize x2 (scales) -> Concat with another conv's map along the
  // channels -> conv. Only x goes in and y comes out through a Transpose.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 6, 6}).input("x2", kF, {1, 3, 12, 12}).output("y");
  m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
  m.initializer("Ws1", {2, 4, 1, 1}, values(8, 0.2f, -0.1f));
  m.initializer("Ws2", {4, 2, 1, 1}, values(8, -0.1f, 0.15f));
  m.initializer("W3", {2, 3, 3, 3}, values(54, 0.1f, 0.05f));
  m.initializer("W4", {3, 6, 3, 3}, values(162, -0.2f, 0.04f));
  m.initializer("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  conv(m, "x", "W1", "c1");
  m.node("GlobalAveragePool", {"c1"}, {"p"});
  m.node("Conv", {"p", "Ws1"}, {"s1"}, "se_reduce");
  m.node("Relu", {"s1"}, {"r1"});
  m.node("Conv", {"r1", "Ws2"}, {"s2"}, "se_expand");
  m.node("Sigmoid", {"s2"}, {"g"});
  m.node("Mul", {"c1", "g"}, {"se"});  // [1,4,6,6] x [1,4,1,1]
  set_string(m.node("Resize", {"se", "", "scales"}, {"up"}), "mode", "nearest");
  conv(m, "x2", "W3", "c3");
  auto& cat = m.node("Concat", {"up", "c3"}, {"cat"});
  auto* axis = cat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  conv(m, "cat", "W4", "y");
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 6, 6})}, {"x2", ramp({1, 3, 12, 12}, 0.5f, -0.11f)}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 5) << d;
  EXPECT_EQ(count_op(*g, "Transpose"), 3) << d;  // x and x2 in, y out
  EXPECT_NE(d.find("c1_nhwc, g_nhwc -> se_nhwc"), std::string::npos) << d;
  EXPECT_NE(d.find("se_nhwc, \"\", scales_nhwc -> up_nhwc"), std::string::npos) << d;
  EXPECT_NE(d.find("up_nhwc, c3_nhwc -> cat_nhwc  axis=3"), std::string::npos) << d;
  EXPECT_NE(d.find("-> p_nhwc  axes=[1,2]"), std::string::npos) << d;  // the pool's twin, no Transpose
  // The Resize's output shape is inferred (the concat and the last conv rely on its rank).
  const ShapeFacts facts = infer_shapes(*g, false);
  bool found = false;
  for (size_t v = 0; v < g->values.size(); ++v) {
    if (g->values[v].name != "up_nhwc") continue;
    found = true;
    ASSERT_TRUE(facts.has_shape[v]);
    ASSERT_EQ(facts.shapes[v].size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(facts.shapes[v][i].value, (std::vector<int64_t>{1, 12, 12, 4})[i]) << i;
  }
  EXPECT_TRUE(found) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ChannelsLastTest, ResizeOfSymbolicSizesKeepsItsRank) {
  // x [N, 3, N, N] (one symbol): scale 1 keeps the batch's symbol, scale 2 of a symbolic size
  // is unknown, and the rank is enough for the conv after the resize to join the region.
  ModelBuilder m;
  m.input("x", kF, {-1, 3, -1, -1}).output("y");
  m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
  m.initializer("W2", {2, 4, 3, 3}, values(72, 0.2f, -0.06f));
  m.initializer("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  conv(m, "x", "W1", "c1");
  set_string(m.node("Resize", {"c1", "", "scales"}, {"up"}), "mode", "nearest");
  conv(m, "up", "W2", "y");
  auto g = optimized_graph(m.bytes(), pass_list(make_channels_last()));
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_occurrences(d, "channels_last=1"), 2) << d;
  EXPECT_EQ(count_op(*g, "Transpose"), 2) << d;
  auto g0 = optimized_graph(m.bytes(), pass_list(make_dead_code_elimination()));
  ASSERT_TRUE(g0);
  const ShapeFacts facts = infer_shapes(*g0, false);
  for (size_t v = 0; v < g0->values.size(); ++v) {
    if (g0->values[v].name != "up") continue;
    ASSERT_TRUE(facts.has_shape[v]);
    const SymShape& sh = facts.shapes[v];
    ASSERT_EQ(sh.size(), 4u);
    EXPECT_FALSE(sh[0].fixed());
    EXPECT_TRUE(sh[0].known());
    EXPECT_EQ(sh[1].value, 4);
    EXPECT_FALSE(sh[2].known());
    EXPECT_FALSE(sh[3].known());
  }
  const std::vector<NamedTensor> in = {{"x", ramp({3, 3, 3, 3})}};  // one symbol: all three sizes alike
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ChannelsLastTest, ResizeBySizesConvertsAndCropResizeDoesNot) {
  // sizes instead of scales (a bilinear resize to 9x7); a tf_crop_and_resize one stays NCHW.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 6, 6}).output("y").output("z");
  m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
  m.initializer("W2", {2, 4, 3, 3}, values(72, 0.2f, -0.06f));
  m.initializer_i64("sizes", {4}, {1, 4, 9, 7});
  m.initializer("roi", {8}, {0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 0.8f});
  m.initializer("scales", {4}, {1.0f, 1.0f, 1.5f, 1.5f});
  conv(m, "x", "W1", "c1");
  auto& r = m.node("Resize", {"c1", "", "", "sizes"}, {"up"});
  set_string(r, "mode", "linear");
  conv(m, "up", "W2", "y");
  auto& crop = m.node("Resize", {"c1", "roi", "scales"}, {"z"}, "crop");
  set_string(crop, "coordinate_transformation_mode", "tf_crop_and_resize");
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 6, 6})}};
  auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("c1_nhwc, \"\", \"\", sizes_nhwc -> up_nhwc"), std::string::npos) << d;
  EXPECT_NE(d.find("Resize 'crop': c1, roi, scales -> z"), std::string::npos) << d;
  EXPECT_EQ(count_op(*g, "Transpose"), 3) << d;  // x in, y out, c1 back for the crop
  expect_session_levels_agree(m.bytes(), in, 2);
}

}  // namespace
}  // namespace osprey::passes::testing

namespace osprey::passes::testing {
namespace {

onnx::TensorProto& byte_initializer(ModelBuilder& m, const std::string& name, bool is_signed, int v) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
  t->add_int32_data(v);
  return *t;
}

TEST(ChannelsLastTest, PerTensorQuantizeDequantizePairsStayInTheRegion) {
  // A QDQ-quantized chain (onnxruntime's quantize_static): conv -> Q -> DQ -> conv -> Q (int8)
  // -> DQ -> y. Per-tensor pairs keep the channels-last layout (with their uint8 / int8 types);
  // a per-axis pair, whose axis names an NCHW dim, leaves the region.
  for (bool per_axis : {false, true}) {
    SCOPED_TRACE(per_axis ? "per axis" : "per tensor");
    ModelBuilder m;
    m.input("x", kF, {1, 3, 6, 6}).output("y");
    m.initializer("W1", {4, 3, 3, 3}, values(108, -0.3f, 0.1f));
    m.initializer("W2", {4, 4, 3, 3}, values(144, 0.2f, -0.06f));
    if (per_axis) m.initializer("s1", {4}, {0.01f, 0.02f, 0.015f, 0.03f});
    else m.initializer("s1", {}, {0.02f});
    m.initializer("s2", {}, {0.05f});
    auto& z1 = byte_initializer(m, "z1", false, 128);
    if (per_axis) {
      z1.add_dims(4);
      for (int i = 0; i < 3; ++i) z1.add_int32_data(100 + i);
    }
    byte_initializer(m, "z2", true, -5);
    conv(m, "x", "W1", "c1");
    m.node("QuantizeLinear", {"c1", "s1", "z1"}, {"q1"});
    m.node("DequantizeLinear", {"q1", "s1", "z1"}, {"d1"});
    conv(m, "d1", "W2", "c2");
    m.node("QuantizeLinear", {"c2", "s2", "z2"}, {"q2"});
    m.node("DequantizeLinear", {"q2", "s2", "z2"}, {"y"});
    const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 6, 6})}};
    auto g = expect_pass_preserves(m.bytes(), with_fusions(), in);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    EXPECT_EQ(count_occurrences(d, "channels_last=1"), 2) << d;
    // In and out; a per-axis pair adds a Transpose out of the region and one back in.
    EXPECT_EQ(count_op(*g, "Transpose"), per_axis ? 4 : 2) << d;
    auto type_of = [&](const std::string& name) {
      for (const auto& v : g->values)
        if (v.name == name) return v.type.dtype;
      return DType::kUndefined;
    };
    EXPECT_EQ(type_of("q2_nhwc"), DType::kInt8);
    EXPECT_EQ(type_of("y_nhwc"), DType::kFloat32);
    if (!per_axis) EXPECT_EQ(type_of("q1_nhwc"), DType::kUInt8);
    expect_session_levels_agree(m.bytes(), in, 2);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
