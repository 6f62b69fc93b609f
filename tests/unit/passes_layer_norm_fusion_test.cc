// layer_norm_fusion: a written-out layer normalization over the last axis becomes one
// com.osprey LayerNormalization; other axes and shared intermediates stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

onnx::AttributeProto axes_attr(int64_t axis) {
  onnx::AttributeProto a;
  a.set_name("axes");
  a.set_type(onnx::AttributeProto::INTS);
  a.add_ints(axis);
  return a;
}

// x[N, 3, 5] -> layer norm over `axis` written out (opset 13), gamma/beta of 5.
ModelBuilder written_out(bool pow, bool beta, int64_t axis = -1) {
  ModelBuilder m(13);
  m.input("x", kF, {-1, 3, 5}).output("y");
  m.node("ReduceMean", {"x"}, {"mu"}).add_attribute()->CopyFrom(axes_attr(axis));
  m.node("Sub", {"x", "mu"}, {"d"});
  if (pow) {
    m.initializer("two", {}, {2.0f});
    m.node("Pow", {"d", "two"}, {"sq"});
  } else {
    m.node("Mul", {"d", "d"}, {"sq"});
  }
  m.node("ReduceMean", {"sq"}, {"var"}).add_attribute()->CopyFrom(axes_attr(axis));
  m.initializer("eps", {}, {1e-5f});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"n"});
  m.initializer("gamma", {5}, {0.5f, 1.0f, 1.5f, -1.0f, 2.0f});
  if (beta) {
    m.node("Mul", {"gamma", "n"}, {"scaled"});
    m.initializer("beta", {5}, {0.1f, 0.2f, -0.3f, 0.0f, 1.0f});
    m.node("Add", {"scaled", "beta"}, {"y"}, "last");
  } else {
    m.node("Mul", {"n", "gamma"}, {"y"}, "last");
  }
  return m;
}

TEST(LayerNormFusionTest, FusesPowAndMulFormsWithAndWithoutBias) {
  for (bool pow : {true, false})
    for (bool beta : {true, false}) {
      SCOPED_TRACE(std::to_string(pow) + std::to_string(beta));
      auto m = written_out(pow, beta);
      const std::vector<NamedTensor> in = {{"x", ramp({2, 3, 5}, -1.0f, 0.77f)}};
      auto g = expect_pass_preserves(m.bytes(), pass_list(make_layer_norm_fusion()), in);
      ASSERT_TRUE(g);
      ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
      const std::string want = beta ? "com.osprey.LayerNormalization 'last': x, gamma, beta -> y"
                                    : "com.osprey.LayerNormalization 'last': x, gamma -> y";
      EXPECT_NE(dump_graph(*g).find(want), std::string::npos) << dump_graph(*g);
      EXPECT_NE(dump_graph(*g).find("axis=-1  epsilon=1e-05"), std::string::npos) << dump_graph(*g);
      expect_session_levels_agree(m.bytes(), in, 2);
    }
}

TEST(LayerNormFusionTest, LeavesOtherAxesAndSharedIntermediates) {
  auto middle = written_out(true, true, 1);
  auto g = optimized_graph(middle.bytes(), pass_list(make_layer_norm_fusion()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "ReduceMean"), 2);

  auto shared = written_out(true, true);
  shared.output("var");
  auto g2 = optimized_graph(shared.bytes(), pass_list(make_layer_norm_fusion()));
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_op(*g2, "com.osprey.LayerNormalization"), 0);
}

}  // namespace
}  // namespace osprey::passes::testing
