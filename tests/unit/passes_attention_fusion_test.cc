// attention_fusion: BERT-style multi-head attention (Reshape/Transpose of Q, K, V, the scaled
// product, optional mask Add, Softmax, product with V, Transpose/Reshape back) becomes one
// com.osprey Attention; shared intermediates, wrong permutations and wrong head splits stay.
#include "passes_test_util.h"

#include <cmath>

#include "kernels/cpu/attention_bf16.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::passes::testing {
namespace {

constexpr int64_t kHeads = 2, kHeadSize = 4, kHidden = kHeads * kHeadSize;

enum class Scale { kDiv, kMul, kMulFirst, kOnQ };

struct Form {
  bool static_shapes = false;  // fixed dims and constant reshape shapes; else symbolic + chains
  bool mask = true;
  bool mask_first = false;  // Add(mask, scores)
  Scale scale = Scale::kDiv;
  bool cross = false;  // K and V of another length (symbol T)
  std::vector<int64_t> k_perm = {0, 2, 3, 1};
  std::vector<int64_t> out_shape = {0, 0, kHidden};  // static form's last Reshape target
  bool swapped_gather = false;                       // chain picks dims 1, 0
};

void set_input(ModelBuilder& m, const std::string& name, std::vector<std::string> dims) {
  auto* v = m.proto().mutable_graph()->add_input();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kF);
  for (const auto& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

void set_ints(onnx::NodeProto& n, const char* name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

// Concat(Unsqueeze(Gather(Shape(t), 0)), Unsqueeze(Gather(Shape(t), 1)), tail...) as `out`.
void shape_chain(ModelBuilder& m, const std::string& t, const std::vector<int64_t>& tail,
                 const std::string& out, bool swapped) {
  m.node("Shape", {t}, {out + "_sh"});
  std::vector<std::string> parts;
  for (int i = 0; i < 2; ++i) {
    const std::string idx = swapped ? (i ? "idx0" : "idx1") : (i ? "idx1" : "idx0");
    const std::string g = out + "_g" + std::to_string(i), u = out + "_u" + std::to_string(i);
    m.node("Gather", {out + "_sh", idx}, {g});
    m.node("Unsqueeze", {g, "axes0"}, {u});
    parts.push_back(u);
  }
  int64_initializer(m, out + "_tail", {static_cast<int64_t>(tail.size())}, tail);
  parts.push_back(out + "_tail");
  auto& c = m.node("Concat", parts, {out});
  auto* a = c.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
}

// q [B, S, 8], k and v [B, S (or T), 8], mask [B, 1, 1, S/T]: 2 heads of 4.
ModelBuilder attention_model(const Form& f) {
  ModelBuilder m(13);
  const std::string B = f.static_shapes ? "2" : "B", S = f.static_shapes ? "3" : "S";
  const std::string T = f.cross ? (f.static_shapes ? "5" : "T") : S;
  set_input(m, "q", {B, S, std::to_string(kHidden)});
  set_input(m, "k", {B, T, std::to_string(kHidden)});
  set_input(m, "v", {B, T, std::to_string(kHidden)});
  if (f.mask) set_input(m, "mask", {B, "1", "1", T});
  m.output("y");
  int64_initializer(m, "idx0", {}, {0});
  int64_initializer(m, "idx1", {}, {1});
  int64_initializer(m, "axes0", {1}, {0});
  for (const char* x : {"q", "k", "v"}) {
    const std::string shp = std::string(x) + "_shape";
    if (f.static_shapes)
      int64_initializer(m, shp, {4}, {0, 0, kHeads, kHeadSize});
    else
      shape_chain(m, x, {kHeads, kHeadSize}, shp, f.swapped_gather);
    m.node("Reshape", {x, shp}, {std::string(x) + "4"});
  }
  set_ints(m.node("Transpose", {"q4"}, {"qt"}), "perm", {0, 2, 1, 3});
  set_ints(m.node("Transpose", {"k4"}, {"kt"}), "perm", f.k_perm);
  set_ints(m.node("Transpose", {"v4"}, {"vt"}), "perm", {0, 2, 1, 3});
  m.initializer("c", {}, {f.scale == Scale::kDiv ? 2.0f : 0.5f});
  std::string a = "qt";
  if (f.scale == Scale::kOnQ) {
    m.node("Mul", {"qt", "c"}, {"qts"});
    a = "qts";
  }
  m.node("MatMul", {a, "kt"}, {"s0"});
  std::string s = "s0";
  if (f.scale == Scale::kDiv) m.node("Div", {"s0", "c"}, {s = "s1"});
  if (f.scale == Scale::kMul) m.node("Mul", {"s0", "c"}, {s = "s1"});
  if (f.scale == Scale::kMulFirst) m.node("Mul", {"c", "s0"}, {s = "s1"});
  if (f.mask) {
    m.node("Add",
           f.mask_first ? std::vector<std::string>{"mask", s} : std::vector<std::string>{s, "mask"},
           {"s2"});
    s = "s2";
  }
  m.node("Softmax", {s}, {"p"});
  m.node("MatMul", {"p", "vt"}, {"o"});
  set_ints(m.node("Transpose", {"o"}, {"ot"}), "perm", {0, 2, 1, 3});
  if (f.static_shapes)
    int64_initializer(m, "y_shape", {static_cast<int64_t>(f.out_shape.size())}, f.out_shape);
  else
    shape_chain(m, "ot", {kHidden}, "y_shape", f.swapped_gather);
  m.node("Reshape", {"ot", "y_shape"}, {"y"}, "last");
  return m;
}

std::vector<NamedTensor> inputs_for(const Form& f, int64_t b = 2, int64_t s = 3, int64_t t = 5) {
  if (!f.cross) t = s;
  Tensor mask(DType::kFloat32, {b, 1, 1, t});
  for (int64_t i = 0; i < mask.numel(); ++i)
    mask.data<float>()[i] = (i % 3 == 2) ? -10000.0f : 0.0f;
  std::vector<NamedTensor> in = {{"q", ramp({b, s, kHidden}, -1.0f, 0.31f)},
                                 {"k", ramp({b, t, kHidden}, 0.8f, -0.17f)},
                                 {"v", ramp({b, t, kHidden}, -0.5f, 0.23f)}};
  if (f.mask) in.push_back({"mask", mask});
  return in;
}

void expect_fused(const Form& f, float want_scale) {
  auto m = attention_model(f);
  const auto in = inputs_for(f);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_attention_fusion()), in);
  ASSERT_TRUE(g);
  const std::string dump = dump_graph(*g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump;
  EXPECT_EQ(count_op(*g, "com.osprey.Attention"), 1) << dump;
  for (const char* op : {"MatMul", "Softmax", "Transpose", "Reshape", "Shape", "Concat"})
    EXPECT_EQ(count_op(*g, op), 0) << op << "\n" << dump;
  const ir::Node& n = g->nodes[0];
  const std::string inputs = f.mask ? "q, k, v, mask -> y" : "q, k, v -> y";
  EXPECT_NE(dump.find("com.osprey.Attention 'last': " + inputs), std::string::npos) << dump;
  ASSERT_NE(n.find_attribute("num_heads"), nullptr);
  EXPECT_EQ(n.find_attribute("num_heads")->i, kHeads);
  ASSERT_NE(n.find_attribute("scale"), nullptr);
  EXPECT_FLOAT_EQ(n.find_attribute("scale")->f, want_scale);
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(AttentionFusionTest, FusesShapeChainsWithMaskAndDiv) {
  expect_fused(Form{}, 0.5f);
}

// The whole default pipeline: shape_folding turns the Shape chains into constant targets
// ([0, 0, H, D]) before the fusion runs, and the Shapes left dead must not stop it (they read
// the attention's output Transpose).
TEST(AttentionFusionTest, DefaultPassesFuseShapeChainsOnceFolded) {
  for (const bool static_shapes : {false, true}) {
    Form f;
    f.static_shapes = static_shapes;
    auto m = attention_model(f);
    PassManagerOptions o;
    o.level = 2;
    o.verify_each_pass = true;
    auto g = import_graph(m.bytes());
    ASSERT_TRUE(g);
    ASSERT_TRUE(PassManager::with_default_passes(o).run(*g).ok());
    const std::string dump = dump_graph(*g);
    EXPECT_EQ(count_op(*g, "com.osprey.Attention"), 1) << dump;
    for (const char* op : {"MatMul", "Softmax", "Transpose", "Shape"})
      EXPECT_EQ(count_op(*g, op), 0) << op << "\n" << dump;
  }
}

TEST(AttentionFusionTest, FusesConstantShapesAndMulScaleForms) {
  Form f;
  f.static_shapes = true;
  f.scale = Scale::kMul;
  expect_fused(f, 0.5f);
  f.scale = Scale::kMulFirst;
  f.mask_first = true;
  expect_fused(f, 0.5f);
}

TEST(AttentionFusionTest, FusesWithoutMaskAndWithScaleOnQ) {
  Form f;
  f.mask = false;
  f.scale = Scale::kMulFirst;
  expect_fused(f, 0.5f);
  f.mask = true;
  f.scale = Scale::kOnQ;
  expect_fused(f, 0.5f);
}

TEST(AttentionFusionTest, FusesCrossAttention) {
  Form f;
  f.cross = true;
  expect_fused(f, 0.5f);
  f.static_shapes = true;
  expect_fused(f, 0.5f);
}

int attention_count(const Form& f, const std::vector<std::string>& extra_outputs = {}) {
  auto m = attention_model(f);
  for (const auto& o : extra_outputs) m.output(o);
  auto g = optimized_graph(m.bytes(), pass_list(make_attention_fusion()));
  EXPECT_TRUE(g);
  return g ? count_op(*g, "com.osprey.Attention") : -1;
}

TEST(AttentionFusionTest, LeavesSharedIntermediates) {
  for (const char* v : {"qt", "kt", "vt", "s0", "s1", "s2", "p", "o", "ot"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(attention_count(Form{}, {v}), 0);
  }
  // A second reader inside the graph: ot also read by a Relu that is an output.
  auto m = attention_model(Form{});
  m.node("Relu", {"p"}, {"p_relu"});
  m.output("p_relu");
  auto g = optimized_graph(m.bytes(), pass_list(make_attention_fusion()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "com.osprey.Attention"), 0);
  EXPECT_EQ(count_op(*g, "Softmax"), 1);
}

TEST(AttentionFusionTest, LeavesWrongHeadSplits) {
  Form split;
  split.static_shapes = true;
  split.out_shape = {2, 4, 6};  // [2, 3, 2, 4] regrouped, not [B, S, H*D]
  EXPECT_EQ(attention_count(split), 0);

  Form swapped;  // the chain's leading entries are dims 1, 0 (S, B) of the reshaped tensors
  swapped.swapped_gather = true;
  EXPECT_EQ(attention_count(swapped), 0);
}

TEST(AttentionFusionTest, LeavesQTimesKWithoutTransposeAndRunsIt) {
  // S = D = 4 so Q K (no transpose of K's last two dims) is a valid, different product.
  Form f;
  f.static_shapes = true;
  f.k_perm = {0, 2, 1, 3};
  EXPECT_EQ(attention_count(f), 0);
  auto m = attention_model(f);
  // Rewrite the static dims to S = 4 (the model builder used 3).
  for (auto& in : *m.proto().mutable_graph()->mutable_input())
    if (in.name() != "mask")
      in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
    else
      in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(3)->set_dim_value(4);
  auto in = inputs_for(f, 2, 4);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_attention_fusion()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "com.osprey.Attention"), 0);
  EXPECT_EQ(count_op(*g, "Softmax"), 1);
}

TEST(AttentionFusionTest, FastModeRunsTheAttentionInBf16) {
  // Fast mode marks the fused attention for bf16 where the CPU's avx512_bf16 outruns its float32
  // FMA (attention_bf16_pays: not on Intel's cores, which run it on one port); the result stays
  // within bf16 rounding of exact mode's but is not the float32 result under another name.
  auto m = attention_model(Form{});
  const auto in = inputs_for(Form{}, 2, 24, 24);
  SessionOptions exact_o, fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(m.bytes(), fast_o);
  if (!cpu::bf16_compute_available()) {
    ASSERT_FALSE(fast.ok());
    GTEST_SKIP() << "no native bf16 on this CPU: fast mode is refused";
  }
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  auto exact = Session::load_from_bytes(m.bytes(), exact_o);
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();
  const std::string dump = (*fast)->graph_dump();
  const bool marked = dump.find("compute_precision=\"bf16\"") != std::string::npos;
  EXPECT_EQ(marked, cpu::attention_bf16_pays()) << dump;
  EXPECT_EQ((*exact)->graph_dump().find("compute_precision"), std::string::npos);
  auto yf = (*fast)->run(in);
  auto ye = (*exact)->run(in);
  ASSERT_TRUE(yf.ok()) << yf.status().to_string();
  ASSERT_TRUE(ye.ok()) << ye.status().to_string();
  const Tensor &a = (*yf)[0].second, &b = (*ye)[0].second;
  ASSERT_EQ(a.shape(), b.shape());
  double dot = 0, na = 0, nb = 0, worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    dot += x * y, na += x * x, nb += y * y;
    worst = std::max(worst, std::fabs(x - y));
  }
  EXPECT_GE(dot / std::sqrt(na * nb), 0.9999);
  EXPECT_LT(worst, 2e-2);
  if (marked) {
    EXPECT_GT(worst, 0.0) << "the bf16 attention gave exactly the float32 result";
  }
}

}  // namespace
}  // namespace osprey::passes::testing
