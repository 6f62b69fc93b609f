// pad_conv_fold: a zero Pad of the spatial dims before a Conv becomes the Conv's pads; other
// Pads (channel padding, a non-zero value, reflect mode, a shared output) stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  return cyclic_values(n, start, step, 5);
}

void ints(onnx::NodeProto& n, const char* name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

TEST(PadConvFoldTest, SpatialZeroPadBecomesConvPads) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2, 5, 6}).output("y");
  m.initializer("W", {3, 2, 3, 3}, values(54, -0.2f, 0.09f));
  int64_initializer(m, "pads", {8}, {0, 0, 1, 2, 0, 0, 2, 1});
  m.initializer("zero", {}, {0.0f});
  m.node("Pad", {"x", "pads", "zero"}, {"p"});
  ints(m.node("Conv", {"p", "W"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 5, 6})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "Pad"), 0) << d;
  EXPECT_NE(d.find("Conv 'conv': x, W -> y  pads=[2,3,3,2]"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 1);
}

TEST(PadConvFoldTest, LeavesPadsThatAreNotASpatialZeroPadding) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).output("a").output("b").output("c").output("d");
  m.initializer("W", {2, 2, 1, 1}, values(4, 0.3f, 0.1f));
  m.initializer("W3", {2, 3, 1, 1}, values(6, 0.3f, 0.1f));
  int64_initializer(m, "spatial", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  int64_initializer(m, "channel", {8}, {0, 1, 0, 0, 0, 0, 0, 0});
  m.initializer("one", {}, {1.0f});
  m.node("Pad", {"x", "channel"}, {"p1"});
  m.node("Conv", {"p1", "W3"}, {"a"});  // pads a channel
  m.node("Pad", {"x", "spatial", "one"}, {"p2"});
  m.node("Conv", {"p2", "W"}, {"b"});  // pads with 1
  auto& reflect = m.node("Pad", {"x", "spatial"}, {"p3"});
  auto* mode = reflect.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("reflect");
  m.node("Conv", {"p3", "W"}, {"c"});
  m.node("Pad", {"x", "spatial"}, {"p4"});
  m.node("Conv", {"p4", "W"}, {"d"});
  m.node("Relu", {"p4"}, {"unused"});  // p4 has another reader
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_pad_conv_fold()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Pad"), 4) << dump_graph(*g);
}

}  // namespace
}  // namespace osprey::passes::testing
