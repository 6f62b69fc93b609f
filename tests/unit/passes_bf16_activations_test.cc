// keep_bf16_between_convs (compute_precision.h): in fast mode, a FusedConv output that only
// fast-mode FusedConvs read (as X or residual Z) becomes bfloat16, through a channels-last
// MaxPool too; graph outputs and values other ops read stay float32, and a node's Z and Y (and
// a pool's X and Y) always share one type. In a fast-mode
// session the outputs stay close to exact mode's.
#include "kernels/cpu/cpu_capabilities.h"
#include "passes/compute_precision.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

void conv(ModelBuilder& m, const std::string& x, const std::string& y, int64_t k) {
  const std::string w = "W_" + y;
  m.initializer(w, {8, 8, k, k}, cyclic_values(static_cast<size_t>(64 * k * k), -0.3f, 0.017f, 13));
  auto& n = m.node("Conv", {x, w}, {y}, "conv_" + y);
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(k / 2);
}

// x -> a = Relu(conv) -> b = Relu(conv 3x3) -> c = Relu(conv(b) + a) -> y = conv(c); with
// `c_is_output`, c is a graph output too; with `c_to_sigmoid`, a Sigmoid reads c instead of
// the last convolution.
std::string residual_chain(bool c_is_output, bool c_to_sigmoid) {
  ModelBuilder m;
  m.input("x", kF, {-1, 8, 5, 5}).output("y");
  if (c_is_output) m.output("c");
  conv(m, "x", "a0", 1);
  m.node("Relu", {"a0"}, {"a"});
  conv(m, "a", "b0", 3);
  m.node("Relu", {"b0"}, {"b"});
  conv(m, "b", "c0", 1);
  m.node("Add", {"c0", "a"}, {"c1"});
  m.node("Relu", {"c1"}, {"c"});
  if (c_to_sigmoid)
    m.node("Sigmoid", {"c"}, {"y"});
  else
    conv(m, "c", "y", 1);
  return m.bytes();
}

// A ResNet-like stem: x -> a = Relu(conv) -> p = MaxPool 3x3 stride 2 -> b = Relu(conv 3x3)
// -> c = Relu(conv(b) + p) -> y = conv(c); with `p_is_output`, p is a graph output too.
std::string stem_with_pool(bool p_is_output) {
  ModelBuilder m;
  m.input("x", kF, {1, 8, 9, 9}).output("y");
  if (p_is_output) m.output("p");
  conv(m, "x", "a0", 3);
  m.node("Relu", {"a0"}, {"a"});
  auto& pool = m.node("MaxPool", {"a"}, {"p"}, "pool");
  for (auto [name, v] : {std::pair<const char*, int64_t>{"kernel_shape", 3}, {"strides", 2}, {"pads", 1}}) {
    auto* at = pool.add_attribute();
    at->set_name(name);
    at->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < (std::string(name) == "pads" ? 4 : 2); ++i) at->add_ints(v);
  }
  conv(m, "p", "b0", 3);
  m.node("Relu", {"b0"}, {"b"});
  conv(m, "b", "c0", 1);
  m.node("Add", {"c0", "p"}, {"c1"});
  m.node("Relu", {"c1"}, {"c"});
  conv(m, "c", "y", 1);
  return m.bytes();
}

// The fused graph with every FusedConv marked for bf16 compute, as fast mode leaves it.
std::shared_ptr<ir::Graph> marked(const std::string& bytes) {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_conv_add_fusion());
  v.push_back(make_conv_activation_fusion());
  v.push_back(make_channels_last());
  v.push_back(make_dead_code_elimination());
  auto g = optimized_graph(bytes, std::move(v));
  if (!g) return nullptr;
  ir::Attribute bf16;
  bf16.type = ir::Attribute::Type::kString;
  bf16.s = "bf16";
  for (auto& n : g->nodes)
    if (n.op_type == "FusedConv") n.attributes[kComputePrecisionAttr] = bf16;
  return g;
}

// The channels_last pass renames the convolutions' outputs: a -> a_nhwc.
const ir::Node& producer_of(const ir::Graph& g, const std::string& value) {
  const int id = g.find_value(value + "_nhwc");
  for (const auto& n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == id) return n;
  ADD_FAILURE() << "no producer of " << value;
  return g.nodes.front();
}

int64_t flag(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  return a ? a->i : 0;
}

DType type_of(const ir::Graph& g, const std::string& value) {
  const int id = g.find_value(value + "_nhwc");
  EXPECT_GE(id, 0) << value;
  return id < 0 ? DType::kUndefined : g.values[static_cast<size_t>(id)].type.dtype;
}

TEST(Bf16ActivationsTest, ChainBetweenConvolutionsBecomesBf16) {
  auto g = marked(residual_chain(false, false));
  ASSERT_TRUE(g);
  ASSERT_EQ(count_op(*g, "com.osprey.FusedConv"), 4) << dump_graph(*g);
  EXPECT_EQ(keep_bf16_between_convs(*g), 3) << dump_graph(*g);
  for (const char* v : {"a", "b", "c"}) EXPECT_EQ(type_of(*g, v), DType::kBFloat16) << v;
  EXPECT_NE(type_of(*g, "y"), DType::kBFloat16);
  // a: from the first convolution, read as X by the 3x3 and as Z by the residual one.
  EXPECT_EQ(flag(producer_of(*g, "a"), "bf16_input"), 0);  // reads the graph input
  EXPECT_EQ(flag(producer_of(*g, "a"), "bf16_output"), 1);
  EXPECT_EQ(flag(producer_of(*g, "b"), "bf16_input"), 1);
  EXPECT_EQ(flag(producer_of(*g, "c"), "bf16_input"), 1);
  EXPECT_EQ(flag(producer_of(*g, "c"), "bf16_output"), 1);
  EXPECT_EQ(flag(producer_of(*g, "y"), "bf16_input"), 1);
  EXPECT_EQ(flag(producer_of(*g, "y"), "bf16_output"), 0);  // a graph output
}

TEST(Bf16ActivationsTest, FloatReaderKeepsYAndItsResidualFloat) {
  // c is read by a Sigmoid (or is a graph output): c stays float32, so the residual node's Z
  // (a) must too; only b, between two convolutions and read as X only, becomes bf16.
  for (bool as_output : {false, true}) {
    auto g = marked(residual_chain(as_output, !as_output));
    ASSERT_TRUE(g);
    EXPECT_EQ(keep_bf16_between_convs(*g), 1) << dump_graph(*g);
    EXPECT_EQ(type_of(*g, "b"), DType::kBFloat16);
    for (const char* v : {"a", "c"}) EXPECT_NE(type_of(*g, v), DType::kBFloat16) << v;
    EXPECT_EQ(flag(producer_of(*g, "a"), "bf16_output"), 0);
    EXPECT_EQ(flag(producer_of(*g, "b"), "bf16_input"), 0);
    EXPECT_EQ(flag(producer_of(*g, "b"), "bf16_output"), 1);
    EXPECT_EQ(flag(producer_of(*g, "c"), "bf16_input"), 1);
    EXPECT_EQ(flag(producer_of(*g, "c"), "bf16_output"), 0);
  }
}

// A channels-last MaxPool between bf16 convolutions passes bfloat16 through: its X and Y become
// bf16 together, its readers take bf16 X (and the residual one bf16 Z); when Y is also a graph
// output both stay float32, and so does the stem convolution's output.
TEST(Bf16ActivationsTest, MaxPoolBetweenConvolutionsPassesBf16Through) {
  auto g = marked(stem_with_pool(false));
  ASSERT_TRUE(g);
  ASSERT_EQ(count_op(*g, "com.osprey.MaxPool"), 1) << dump_graph(*g);
  EXPECT_EQ(keep_bf16_between_convs(*g), 4) << dump_graph(*g);
  for (const char* v : {"a", "p", "b", "c"}) EXPECT_EQ(type_of(*g, v), DType::kBFloat16) << v;
  EXPECT_EQ(flag(producer_of(*g, "a"), "bf16_output"), 1);
  EXPECT_EQ(flag(producer_of(*g, "b"), "bf16_input"), 1);  // reads the pool's Y
  EXPECT_EQ(flag(producer_of(*g, "c"), "bf16_output"), 1);  // its Z is the pool's Y
  EXPECT_EQ(flag(producer_of(*g, "y"), "bf16_output"), 0);  // a graph output
  // p also a graph output: p, a (the pool's X) and c (whose Z is p) stay float32.
  auto kept = marked(stem_with_pool(true));
  ASSERT_TRUE(kept);
  EXPECT_EQ(keep_bf16_between_convs(*kept), 1) << dump_graph(*kept);
  for (const char* v : {"a", "p", "c"}) EXPECT_NE(type_of(*kept, v), DType::kBFloat16) << v;
  EXPECT_EQ(type_of(*kept, "b"), DType::kBFloat16);
  EXPECT_EQ(flag(producer_of(*kept, "a"), "bf16_output"), 0);
}

TEST(Bf16ActivationsTest, UnmarkedConvolutionsStayFloat) {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_conv_add_fusion());
  v.push_back(make_conv_activation_fusion());
  auto g = optimized_graph(residual_chain(false, false), std::move(v));
  ASSERT_TRUE(g);
  EXPECT_EQ(keep_bf16_between_convs(*g), 0);  // exact mode: no compute_precision anywhere
}

TEST(Bf16ActivationsTest, FastSessionKeepsBf16BetweenConvolutionsAndStaysClose) {
  SessionOptions exact_o, fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(residual_chain(false, false), fast_o);
  if (!cpu::bf16_compute_available()) {
    ASSERT_FALSE(fast.ok());  // refused with the reason (session_precision_test.cc checks it)
    GTEST_SKIP() << "no native bf16 on this CPU";
  }
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  auto exact = Session::load_from_bytes(residual_chain(false, false), exact_o);
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();
  const std::string dump = (*fast)->graph_dump();
  EXPECT_EQ(count_occurrences(dump, "bf16_output=1"), 3) << dump;
  EXPECT_EQ(count_occurrences(dump, "bf16_input=1"), 3) << dump;
  expect_fast_close_to_exact(**fast, **exact, {{"x", ramp({1, 8, 5, 5}, -1.0f, 0.01f)}});
}

TEST(Bf16ActivationsTest, FastSessionThroughABf16PoolStaysClose) {
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 on this CPU";
  SessionOptions exact_o, fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(stem_with_pool(false), fast_o);
  auto exact = Session::load_from_bytes(stem_with_pool(false), exact_o);
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();
  const std::string dump = (*fast)->graph_dump();
  EXPECT_NE(dump.find("-> p_nhwc"), std::string::npos) << dump;
  EXPECT_EQ(count_occurrences(dump, "bf16_input=1"), 3) << dump;  // b, c and y read bf16 X
  expect_fast_close_to_exact(**fast, **exact, {{"x", ramp({1, 8, 9, 9}, -1.0f, 0.003f)}});
}

TEST(Bf16ActivationsTest, FastBatchItemByItemMatchesWholeBatch) {
  // A batch of 3 run item by item (batch_split on) and at once: the bf16 values between the
  // convolutions are per item either way, so the two agree to float32 rounding of the sums.
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 on this CPU";
  SessionOptions split_o, whole_o;
  split_o.precision = whole_o.precision = Precision::kFast;
  split_o.batch_split = BatchSplit::kOn;
  whole_o.batch_split = BatchSplit::kOff;
  auto split = Session::load_from_bytes(residual_chain(false, false), split_o);
  auto whole = Session::load_from_bytes(residual_chain(false, false), whole_o);
  ASSERT_TRUE(split.ok()) << split.status().to_string();
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ((*split)->batch_split_summary(), "item by item");
  const std::vector<NamedTensor> in = {{"x", ramp({3, 8, 5, 5}, -1.0f, 0.003f)}};
  auto ys = (*split)->run(in);
  auto yw = (*whole)->run(in);
  ASSERT_TRUE(ys.ok()) << ys.status().to_string();
  ASSERT_TRUE(yw.ok()) << yw.status().to_string();
  const Tensor &a = (*ys)[0].second, &b = (*yw)[0].second;
  ASSERT_EQ(a.shape(), (Shape{3, 8, 5, 5}));
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_GE(cosine(a, b), 0.99999);
}

}  // namespace
}  // namespace osprey::passes::testing
