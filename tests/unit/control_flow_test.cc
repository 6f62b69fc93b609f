// Control-flow kernels on malformed inputs: errors, never crashes (found by fuzz_model_run).
#include <gtest/gtest.h>

#include "model_builder.h"
#include "osprey/session.h"

namespace osprey {
namespace {

using testing::ModelBuilder;
constexpr int kF = onnx::TensorProto::FLOAT;

// Scan-8 (batch axis first) whose state is a scalar: no batch axis to split.
TEST(ControlFlowTest, Scan8RejectsInputsWithoutBatchAxis) {
  ModelBuilder m(8);
  m.input("s", kF, {}).input("x", kF, {2, 3}).output("s_out").output("y");
  auto& scan = m.node("Scan", {"", "s", "x"}, {"s_out", "y"});
  auto* n = scan.add_attribute();
  n->set_name("num_scan_inputs");
  n->set_type(onnx::AttributeProto::INT);
  n->set_i(1);
  auto* body = scan.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  auto* g = body->mutable_g();
  g->set_name("body");
  for (const char* name : {"bs", "bx"}) g->add_input()->set_name(name);
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("bs");
  add->add_input("bx");
  add->add_output("bs2");
  auto* id = g->add_node();
  id->set_op_type("Identity");
  id->add_input("bx");
  id->add_output("by");
  g->add_output()->set_name("bs2");
  g->add_output()->set_name("by");
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run({{"s", Tensor(DType::kFloat32, {})}, {"x", Tensor(DType::kFloat32, {2, 3})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("batch axis"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace osprey
