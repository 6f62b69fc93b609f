// transpose_reshape_cancellation: Transpose pairs compose (or vanish), Reshape pairs keep only
// the last; shared middle values and 0-copying targets stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

onnx::AttributeProto perm(std::vector<int64_t> p) {
  onnx::AttributeProto a;
  a.set_name("perm");
  a.set_type(onnx::AttributeProto::INTS);
  for (auto v : p) a.add_ints(v);
  return a;
}

TEST(TransposeReshapeCancellationTest, ComposesAndCancelsTransposes) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2, 3, 4}).output("y").output("z");
  m.node("Transpose", {"x"}, {"t1"}).add_attribute()->CopyFrom(perm({0, 2, 1, 3}));
  m.node("Transpose", {"t1"}, {"t2"}).add_attribute()->CopyFrom(perm({0, 2, 1, 3}));
  m.node("Relu", {"t2"}, {"y"});  // t2 == x: both Transposes go
  m.node("Transpose", {"x"}, {"u1"}).add_attribute()->CopyFrom(perm({0, 2, 3, 1}));
  m.node("Transpose", {"u1"}, {"z"}, "second").add_attribute()->CopyFrom(perm({2, 0, 3, 1}));
  const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 3, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_transpose_reshape_cancellation()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Transpose"), 1) << dump_graph(*g);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("Relu 'Relu_y': x -> y"), std::string::npos) << d;
  EXPECT_NE(d.find("Transpose 'second': x -> z  perm=[3,0,1,2]"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(TransposeReshapeCancellationTest, KeepsOnlyTheLastReshape) {
  ModelBuilder m;
  m.input("x", kF, {2, 3, 4}).output("y").output("z").output("w");
  int64_initializer(m, "s1", {2}, {6, 4});
  int64_initializer(m, "s2", {3}, {4, 3, 2});
  int64_initializer(m, "s3", {2}, {0, -1});
  m.node("Reshape", {"x", "s1"}, {"r1"});
  m.node("Reshape", {"r1", "s2"}, {"y"}, "last");
  m.node("Reshape", {"x", "s1"}, {"q1"});
  m.node("Reshape", {"q1", "s3"}, {"z"});  // 0 copies q1's dim 0 (6): kept
  m.node("Reshape", {"x", "s2"}, {"v1"});
  m.node("Reshape", {"v1", "s1"}, {"w"});
  m.node("Neg", {"v1"}, {"unused"});  // v1 has another reader: kept
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_transpose_reshape_cancellation()), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("Reshape 'last': x, s2 -> y"), std::string::npos) << d;
  EXPECT_EQ(count_op(*g, "Reshape"), 5) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

}  // namespace
}  // namespace osprey::passes::testing
