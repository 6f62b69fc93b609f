// shape_folding: shape computations on static dims become constants; symbolic dims never do,
// except as a Reshape's copied dims. And the Reshape shape facts the rule relies on.
#include "passes/shape_inference.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

std::vector<std::unique_ptr<Pass>> folding_passes() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_shape_folding());
  v.push_back(make_constant_folding());
  v.push_back(make_dead_code_elimination());
  return v;
}

// x[dims] -> Relu -> h; h reshaped to [d0, d1, 2, 4] with d0, d1 read from Shape(h) the way
// exporters write it, and its last dim (8, static) read from Shape(h) too.
ModelBuilder bert_like(std::vector<int64_t> dims) {
  ModelBuilder m;
  m.input("x", kF, dims).output("y").output("last", kI64);
  m.node("Relu", {"x"}, {"h"});
  m.node("Shape", {"h"}, {"s"});
  int64_initializer(m, "axes", {1}, {0});
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    int64_initializer(m, "i" + k, {}, {i});
    m.node("Gather", {"s", "i" + k}, {"d" + k});
    m.node("Unsqueeze", {"d" + k, "axes"}, {"u" + k});
  }
  int64_initializer(m, "heads", {2}, {2, 4});
  m.node("Concat", {"u0", "u1", "heads"}, {"target"})
      .add_attribute()
      ->CopyFrom(int_attr("axis", 0));
  m.node("Reshape", {"h", "target"}, {"y"});
  m.node("Identity", {"d2"}, {"last"});
  return m;
}

// The shape facts of y = Reshape(x [N, 6, 2], target) for a constant target.
SymShape reshaped(const std::vector<int64_t>& target) {
  ModelBuilder m;
  m.input("x", kF, {-1, 6, 2}).output("y");
  int64_initializer(m, "t", {static_cast<int64_t>(target.size())}, target);
  m.node("Reshape", {"x", "t"}, {"y"});
  auto g = import_graph(m.bytes());
  EXPECT_TRUE(g);
  if (!g) return {};
  const ShapeFacts facts = infer_shapes(*g, false);
  for (size_t v = 0; v < g->values.size(); ++v)
    if (g->values[v].name == "y" && facts.has_shape[v]) return facts.shapes[v];
  return {};
}

TEST(ShapeFoldingTest, ReshapeInfersMinusOneOnceSharedSymbolsCancel) {
  SymShape y = reshaped({0, -1});  // [N, 12]
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(y[0].known() && !y[0].fixed());
  EXPECT_EQ(y[1].value, 12);
  y = reshaped({0, 4, -1});  // [N, 4, 3]
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[1].value, 4);
  EXPECT_EQ(y[2].value, 3);
  y = reshaped({-1, 4});  // N * 3 is not a number: unknown, never a guess
  ASSERT_EQ(y.size(), 2u);
  EXPECT_FALSE(y[0].known());
  EXPECT_EQ(y[1].value, 4);
  y = reshaped({0, 5, -1});  // 12 is not a multiple of 5
  ASSERT_EQ(y.size(), 3u);
  EXPECT_FALSE(y[2].known());
}

TEST(ShapeFoldingTest, FoldsStaticShapeChainsOfIntermediateValues) {
  ModelBuilder m = bert_like({3, 5, 8});
  const std::vector<NamedTensor> in = {{"x", ramp({3, 5, 8})}};
  auto g = expect_pass_preserves(m.bytes(), folding_passes(), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Shape"), 0);
  EXPECT_EQ(count_op(*g, "Gather"), 0);
  EXPECT_EQ(count_op(*g, "Concat"), 0);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("initializer target: int64[4]{3,5,2,4}"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in);
}

TEST(ShapeFoldingTest, KeepsSymbolicDimsAndFoldsStaticOnes) {
  ModelBuilder m = bert_like({-1, -1, 8});
  m.proto()  // [batch, seq, 8]
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("seq");
  // Dim 0 is also an output of its own: its Gather stays.
  m.output("first", kI64);
  m.node("Identity", {"d0"}, {"first"});
  auto g = optimized_graph(m.bytes(), folding_passes());
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Shape"), 1);
  EXPECT_EQ(count_op(*g, "Gather"), 1);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("initializer last: int64[]{8}"), std::string::npos) << d;
  // The Reshape keeps dims 0 and 1 where they are: a constant target copies them (0), and the
  // Gather of dim 1 goes dead.
  EXPECT_NE(d.find("initializer target_constant: int64[4]{0,0,2,4}"), std::string::npos) << d;
  for (auto dims : {Shape{2, 3, 8}, Shape{4, 1, 8}}) {
    const std::vector<NamedTensor> in = {{"x", ramp(dims)}};
    expect_pass_preserves(m.bytes(), folding_passes(), in);
    expect_session_levels_agree(m.bytes(), in);
  }
}

TEST(ShapeFoldingTest, FoldsShapeThroughConvMatMulAndTranspose) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2, 6, 6}).output("y").output("s", kI64);
  m.initializer("W", {3, 2, 3, 3}, std::vector<float>(54, 0.1f));
  auto& conv = m.node("Conv", {"x", "W"}, {"c"});
  auto* strides = conv.add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(2);
  strides->add_ints(2);
  m.node("Transpose", {"c"}, {"t"});  // [2, 2, 3, N]
  m.initializer("M", {1, 5}, {1, 2, 3, 4, 5});
  m.node("Unsqueeze", {"t", "ax"}, {"tu"});
  int64_initializer(m, "ax", {1}, {4});
  m.node("MatMul", {"tu", "M"}, {"y"});  // [2, 2, 3, N, 5]
  m.node("Shape", {"y"}, {"full"});
  int64_initializer(m, "idx", {3}, {0, 1, 4});
  m.node("Gather", {"full", "idx"}, {"s"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 6, 6})}};
  auto g = expect_pass_preserves(m.bytes(), folding_passes(), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Gather"), 0);
  EXPECT_NE(dump_graph(*g).find("initializer s: int64[3]{2,2,5}"), std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(ShapeFoldingTest, ShapesCastToInt32AndBackFoldWithTheirTypes) {
  // PaddlePaddle's form: Shape -> Cast(int32) -> Slice -> Cast(int64) -> Concat -> Reshape. The
  // static case folds (the int32 slice, a graph output, into an int32 constant); with a
  // symbolic dim the contents still reach the Reshape, so its output shape is known, and its
  // target becomes a constant that copies the batch dim.
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic);
    ModelBuilder m;
    m.input("x", kF, {symbolic ? -1 : 2, 3, 4}).output("y").output("s32", onnx::TensorProto::INT32);
    m.node("Shape", {"x"}, {"s"});
    m.node("Cast", {"s"}, {"s32"}).add_attribute()->CopyFrom(int_attr("to", onnx::TensorProto::INT32));
    int64_initializer(m, "starts", {1}, {0});
    int64_initializer(m, "ends", {1}, {2});
    m.node("Slice", {"s32", "starts", "ends"}, {"head32"});
    m.node("Cast", {"head32"}, {"head"}).add_attribute()->CopyFrom(int_attr("to", onnx::TensorProto::INT64));
    int64_initializer(m, "rest", {1}, {-1});
    m.node("Concat", {"head", "rest"}, {"target"}).add_attribute()->CopyFrom(int_attr("axis", 0));
    m.node("Reshape", {"x", "target"}, {"y"});
    const std::vector<NamedTensor> in = {{"x", ramp({2, 3, 4})}};
    auto g = expect_pass_preserves(m.bytes(), folding_passes(), in);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    if (!symbolic) {
      EXPECT_EQ(count_op(*g, "Cast"), 0) << d;
      EXPECT_NE(d.find("initializer s32: int32[3]{2,3,4}"), std::string::npos) << d;
      EXPECT_NE(d.find("initializer target_constant: int64[3]{2,3,-1}"), std::string::npos) << d;
    } else {
      // The sliced batch dim reaches the Reshape at its own place: copied (0); the Slice, the
      // Cast back and the Concat go dead (Shape and the Cast to int32 make an output).
      EXPECT_EQ(count_op(*g, "Shape"), 1) << d;
      EXPECT_EQ(count_op(*g, "Slice"), 0) << d;
      EXPECT_EQ(count_op(*g, "Concat"), 0) << d;
      EXPECT_NE(d.find("initializer target_constant: int64[3]{0,3,-1}"), std::string::npos) << d;
      const ShapeFacts facts = infer_shapes(*g, false);
      for (size_t v = 0; v < g->values.size(); ++v)
        if (g->values[v].name == "y") {
          ASSERT_TRUE(facts.has_shape[v]);
          ASSERT_EQ(facts.shapes[v].size(), 3u);
          EXPECT_TRUE(facts.shapes[v][0].known() && !facts.shapes[v][0].fixed());
          EXPECT_EQ(facts.shapes[v][1].value, 3);
        }
    }
    expect_session_levels_agree(m.bytes(), in);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
