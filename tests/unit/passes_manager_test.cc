// PassManager: levels, dumps, timing, verification, subgraphs; graph_dump's text form.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

// Records where it ran; optionally breaks the graph.
class ProbePass final : public Pass {
 public:
  ProbePass(int level, bool breaks, std::vector<std::string>* seen)
      : level_(level), breaks_(breaks), seen_(seen) {}
  const char* name() const override { return "probe"; }
  int level() const override { return level_; }
  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    seen_->push_back((ctx.in_subgraph ? "sub:" : "main:") + g.name);
    if (!breaks_ || ctx.in_subgraph) return false;
    g.nodes.erase(g.nodes.begin());  // drops the producer of a read value
    return true;
  }

 private:
  int level_;
  bool breaks_;
  std::vector<std::string>* seen_;
};

std::string branch_model() {
  ModelBuilder m;
  m.input("x", kF, {3}).input("c", onnx::TensorProto::BOOL, {}).output("o");
  m.node("Relu", {"x"}, {"a"});
  auto& n = m.node("If", {"c"}, {"o"});
  auto& t = add_branch(n, "then_branch", "t");
  add_subgraph_node(t, "Identity", {"a"}, {"t1"});
  add_subgraph_node(t, "Neg", {"t1"}, {"t"});
  add_subgraph_node(add_branch(n, "else_branch", "e"), "Abs", {"a"}, {"e"});
  return m.bytes();
}

TEST(PassManagerTest, RunsPassesUpToTheLevelOverEverySubgraph) {
  auto g = import_graph(branch_model());
  ASSERT_TRUE(g);
  std::vector<std::string> seen;
  PassManagerOptions o;
  o.level = 1;
  PassManager pm(o);
  pm.add(std::make_unique<ProbePass>(1, false, &seen));
  pm.add(std::make_unique<ProbePass>(2, false, &seen));  // above the level: skipped
  ASSERT_TRUE(pm.run(*g).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"main:g", "sub:else_branch", "sub:then_branch"}));
  ASSERT_EQ(pm.records().size(), 1u);

  PassManagerOptions zero;
  zero.level = 0;
  PassManager none(zero);
  none.add(std::make_unique<ProbePass>(1, false, &seen));
  seen.clear();
  ASSERT_TRUE(none.run(*g).ok());
  EXPECT_TRUE(seen.empty());
}

TEST(PassManagerTest, DumpsTimesAndNamesDisabledPasses) {
  auto g = import_graph(branch_model());
  ASSERT_TRUE(g);
  std::vector<std::string> stages;
  PassManagerOptions o;
  o.time_passes = true;
  o.verify_each_pass = true;
  o.disabled = {"constant_folding", "inline_captured_constants", "shape_folding",
                "common_subexpression_elimination"};
  o.dump = [&](const std::string& pass, const std::string& stage, const std::string& text) {
    stages.push_back(pass + ":" + stage);
    if (pass == "identity_elimination") {
      EXPECT_EQ(text.find("Identity") != std::string::npos, stage == "before") << stage << ":\n"
                                                                               << text;
    }
  };
  auto pm = PassManager::with_default_passes(o);
  ASSERT_TRUE(pm.run(*g).ok());
  EXPECT_EQ(stages, (std::vector<std::string>{
                        "identity_elimination:before", "identity_elimination:after",
                        "dead_code_elimination:before", "dead_code_elimination:after",
                        "conv_bn_fold:before", "conv_bn_fold:after", "pad_conv_fold:before",
                        "pad_conv_fold:after", "dead_code_elimination:before",
                        "dead_code_elimination:after"}));
  ASSERT_EQ(pm.records().size(), 5u);
  EXPECT_TRUE(pm.records()[0].changed);  // the Identity inside the then-branch
  EXPECT_FALSE(pm.records()[1].changed);
  for (const auto& r : pm.records()) EXPECT_GE(r.micros, 0);
  // The rewritten graph runs like the original.
  for (bool c : {true, false})
    expect_session_levels_agree(branch_model(), {{"x", ramp({3})}, {"c", bool_scalar(c)}});
}

TEST(PassManagerTest, VerificationNamesTheBrokenPass) {
  auto g = import_graph(branch_model());
  ASSERT_TRUE(g);
  std::vector<std::string> seen;
  PassManager pm(PassManagerOptions{});
  pm.add(std::make_unique<ProbePass>(1, true, &seen));
  Status s = pm.run(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("pass probe left an invalid graph"), std::string::npos) << s.message();
}

TEST(GraphDumpTest, StableTextForm) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2}).output("y");
  m.initializer("b", {2}, {0.5f, -1});
  auto& g = m.node("Gemm", {"x", "x", "b"}, {"y"}, "fc");
  auto* a = g.add_attribute();
  a->set_name("transB");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  auto graph = import_graph(m.bytes());
  ASSERT_TRUE(graph);
  EXPECT_EQ(dump_graph(*graph),
            "graph 'g': 1 nodes, 1 initializers (2 elements)\n"
            "  input x: float32[N,2]\n"
            "  initializer b: float32[2]{0.5,-1}\n"
            "  Gemm 'fc': x, x, b -> y  transB=1\n"
            "  output y: float32\n");
}

}  // namespace
}  // namespace osprey::passes::testing
