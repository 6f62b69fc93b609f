// qkv_projection_merge: the three products that make an Attention's Q, K and V from one input
// become one product with joined weights and biases, and the Attention reads its output
// packed; shared outputs, different inputs, residuals and activations stay as they are.
#include "passes_test_util.h"

#include "kernels/cpu/cpu_capabilities.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/shape_inference.h"

namespace osprey::passes::testing {
namespace {

constexpr int64_t kHidden = 8, kIn = 6;  // 2 heads of 4; A [B, S, 6]

enum class Proj { kMatMulAdd, kMatMulOnly, kTransposedFused };

struct Form {
  Proj v_form = Proj::kMatMulOnly;  // V's product (Q and K: MatMul + Add)
  bool transposed = false;          // all three as com.osprey FusedMatMul(trans_b = 1)
  bool mask = true;
  bool k_reads_other_input = false;
  std::string extra_output;         // a value also made a graph output
  bool k_residual = false;          // K's product takes a residual input
  bool q_relu = false;              // Q's product ends in Relu
};

std::vector<float> weights(int seed, bool transposed) {
  std::vector<float> w(static_cast<size_t>(kIn * kHidden));
  for (int64_t r = 0; r < kIn; ++r)
    for (int64_t c = 0; c < kHidden; ++c) {
      const float v = 0.05f * static_cast<float>((r * 7 + c * 3 + seed * 5) % 11) - 0.25f;
      w[static_cast<size_t>(transposed ? c * kIn + r : r * kHidden + c)] = v;
    }
  return w;
}

// x [B, S, 6] (and x2 of the same shape) -> Q, K, V [B, S, 8] -> Attention (2 heads) -> y.
ModelBuilder qkv_model(const Form& f) {
  ModelBuilder m(17);
  auto* op = m.proto().add_opset_import();
  op->set_domain("com.osprey");
  op->set_version(1);
  m.input("x", kF, {-1, 5, kIn}, "B");
  m.input("x2", kF, {-1, 5, kIn}, "B");
  if (f.mask) m.input("mask", kF, {-1, 1, 1, 5}, "B");
  m.output("y");
  if (!f.extra_output.empty()) m.output(f.extra_output);
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string n = names[i], w = "w" + n, b = "b" + n;
    const std::string a = i == 1 && f.k_reads_other_input ? "x2" : "x";
    m.initializer(w, f.transposed ? std::vector<int64_t>{kHidden, kIn} : std::vector<int64_t>{kIn, kHidden},
                  weights(i, f.transposed));
    m.initializer(b, {kHidden}, cyclic_values(kHidden, -0.3f + 0.1f * i, 0.07f, 5));
    const Proj form = i == 2 ? f.v_form : Proj::kMatMulAdd;
    std::string out = n;
    if (i == 0 && f.q_relu) out = "q_pre";
    if (f.transposed || form == Proj::kTransposedFused) {
      auto& p = m.node("FusedMatMul", {a, w, b}, {out});
      p.set_domain("com.osprey");
      auto* t = p.add_attribute();
      t->set_name("trans_b");
      t->set_type(onnx::AttributeProto::INT);
      t->set_i(1);
    } else if (form == Proj::kMatMulOnly) {
      m.node("MatMul", {a, w}, {out});
    } else {
      m.node("MatMul", {a, w}, {n + "_mm"});
      m.node("Add", {n + "_mm", b}, {i == 1 && f.k_residual ? "k_pre" : out});
    }
    if (i == 1 && f.k_residual) m.node("Add", {"k_pre", "x_wide"}, {"k"});
    if (i == 0 && f.q_relu) m.node("Relu", {"q_pre"}, {"q"});
  }
  if (f.k_residual) {  // x_wide: a [B, S, 8] value that does not depend on K's product
    m.node("MatMul", {"x", "wq"}, {"x_wide"});
  }
  std::vector<std::string> ins = {"q", "k", "v"};
  if (f.mask) ins.push_back("mask");
  auto& att = m.node("Attention", ins, {"y"}, "attention");
  att.set_domain("com.osprey");
  auto* h = att.add_attribute();
  h->set_name("num_heads");
  h->set_type(onnx::AttributeProto::INT);
  h->set_i(2);
  return m;
}

std::vector<NamedTensor> inputs_for(const Form& f, int64_t b = 2) {
  Tensor mask(DType::kFloat32, {b, 1, 1, 5});
  for (int64_t i = 0; i < mask.numel(); ++i)
    mask.data<float>()[i] = (i % 4 == 3) ? -10000.0f : 0.0f;
  std::vector<NamedTensor> in = {{"x", ramp({b, 5, kIn}, -1.0f, 0.053f)},
                                 {"x2", ramp({b, 5, kIn}, 0.7f, -0.031f)}};
  if (f.mask) in.push_back({"mask", mask});
  return in;
}

std::vector<std::unique_ptr<Pass>> passes() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_matmul_add_fusion());
  v.push_back(make_qkv_projection_merge());
  return v;
}

const ir::Node* find_op(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

void expect_merged(const Form& f) {
  auto m = qkv_model(f);
  const auto in = inputs_for(f);
  auto g = expect_pass_preserves(m.bytes(), passes(), in);
  ASSERT_TRUE(g);
  const std::string dump = dump_graph(*g);
  ASSERT_EQ(count_op(*g, "com.osprey.FusedMatMul"), 1) << dump;
  ASSERT_EQ(count_op(*g, "com.osprey.Attention"), 1) << dump;
  const ir::Node* p = find_op(*g, "FusedMatMul");
  const ir::Node* a = find_op(*g, "Attention");
  ASSERT_TRUE(p && a);
  EXPECT_EQ(a->inputs[0], p->outputs[0]) << dump;
  EXPECT_EQ(input_at(*a, 1), ir::kNoValue) << dump;
  EXPECT_EQ(input_at(*a, 2), ir::kNoValue) << dump;
  EXPECT_EQ(input_at(*a, 3) != ir::kNoValue, f.mask) << dump;
  const Tensor* w = constant_tensor(*g, p->inputs[1]);
  const Tensor* b = constant_tensor(*g, p->inputs[2]);
  ASSERT_TRUE(w && b) << dump;
  EXPECT_EQ(w->shape(), f.transposed ? (Shape{3 * kHidden, kIn}) : (Shape{kIn, 3 * kHidden}));
  ASSERT_EQ(b->shape(), (Shape{3 * kHidden}));
  if (f.v_form == Proj::kMatMulOnly && !f.transposed) {  // V had no bias: zeros
    for (int64_t i = 2 * kHidden; i < 3 * kHidden; ++i) EXPECT_EQ(b->data<float>()[i], 0.0f);
  }
  // Shape inference gives the packed Attention [B, S, 8].
  const ShapeFacts facts = infer_shapes(*g, false);
  const int y = a->outputs[0];
  std::vector<int64_t> dims;
  ASSERT_TRUE(facts.has_shape[static_cast<size_t>(y)]);
  const SymShape& s = facts.shapes[static_cast<size_t>(y)];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].sym, "in:B");  // the graph input's symbolic batch
  EXPECT_EQ(s[1].value, 5);
  EXPECT_EQ(s[2].value, kHidden);
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(QkvProjectionMergeTest, MergesProjectionsWithAndWithoutBiases) {
  expect_merged(Form{});
  Form all_biased;
  all_biased.v_form = Proj::kMatMulAdd;
  all_biased.mask = false;
  expect_merged(all_biased);
}

TEST(QkvProjectionMergeTest, MergesTransposedWeights) {
  Form f;
  f.transposed = true;
  expect_merged(f);
}

int products_after(const Form& f) {
  auto m = qkv_model(f);
  auto g = expect_pass_preserves(m.bytes(), passes(), inputs_for(f));
  EXPECT_TRUE(g);
  if (!g) return -1;
  const ir::Node* a = find_op(*g, "Attention");
  EXPECT_TRUE(a && input_at(*a, 1) != ir::kNoValue) << dump_graph(*g);
  return count_op(*g, "com.osprey.FusedMatMul") + count_op(*g, "MatMul");
}

TEST(QkvProjectionMergeTest, LeavesProductsThatCannotJoin) {
  Form other;
  other.k_reads_other_input = true;
  EXPECT_EQ(products_after(other), 3);
  Form shared;
  shared.extra_output = "k";
  EXPECT_EQ(products_after(shared), 3);
  Form residual;
  residual.k_residual = true;
  EXPECT_EQ(products_after(residual), 4);  // x_wide's product too
  Form relu;
  relu.q_relu = true;
  EXPECT_EQ(products_after(relu), 3);
}

TEST(QkvProjectionMergeTest, PackedAttentionSplitsTheBatchAndCanBeDisabled) {
  const Form f;
  auto m = qkv_model(f);
  const auto in = inputs_for(f, 3);
  SessionOptions split_o, whole_o, off_o;
  split_o.batch_split = BatchSplit::kOn;
  whole_o.batch_split = BatchSplit::kOff;
  off_o.disabled_passes = {"qkv_projection_merge"};
  auto split = Session::load_from_bytes(m.bytes(), split_o);
  auto whole = Session::load_from_bytes(m.bytes(), whole_o);
  auto off = Session::load_from_bytes(m.bytes(), off_o);
  ASSERT_TRUE(split.ok() && whole.ok() && off.ok()) << split.status().to_string();
  EXPECT_EQ((*split)->batch_split_summary(), "item by item");
  EXPECT_NE((*whole)->graph_dump().find("\"\", \"\", mask -> y"), std::string::npos)
      << (*whole)->graph_dump();
  EXPECT_NE((*off)->graph_dump().find("q, k, v, mask -> y"), std::string::npos)
      << (*off)->graph_dump();
  auto a = (*split)->run(in);
  auto b = (*whole)->run(in);
  auto c = (*off)->run(in);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().to_string() << b.status().to_string();
  expect_close((*a)[0].second, (*b)[0].second, "split vs whole");
  expect_close((*b)[0].second, (*c)[0].second, "merged vs not");
  SessionOptions bad;
  bad.disabled_passes = {"qkv_merge"};
  auto refused = Session::load_from_bytes(m.bytes(), bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("'qkv_merge' is not an optimization pass"),
            std::string::npos)
      << refused.status().to_string();
}

TEST(QkvProjectionMergeTest, PackedAttentionRunsInFastMode) {
  const Form f;
  auto m = qkv_model(f);
  const auto in = inputs_for(f, 3);
  auto whole = Session::load_from_bytes(m.bytes(), SessionOptions{});
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_NE((*whole)->graph_dump().find("\"\", \"\", mask -> y"), std::string::npos);
  SessionOptions fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(m.bytes(), fast_o);
  if (!cpu::bf16_compute_available()) {
    ASSERT_FALSE(fast.ok());
    GTEST_SKIP() << "no native bf16 on this CPU: fast mode is refused";
  }
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  expect_fast_close_to_exact(**fast, **whole, in);
}

}  // namespace
}  // namespace osprey::passes::testing
