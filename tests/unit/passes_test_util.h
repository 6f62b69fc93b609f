// Shared by the pass tests (tests/unit/passes_*_test.cc): import a model, run chosen passes on
// its graph, run the graph with reference kernels, and compare outputs with and without them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "model_builder.h"
#include "test_models.h"
#include "onnx/onnx_import.h"
#include "osprey/session.h"
#include "passes/graph_dump.h"
#include "passes/pass_manager.h"
#include "runtime/executor.h"

namespace osprey::passes::testing {

using osprey::testing::ModelBuilder;
using osprey::testing::count_occurrences;
constexpr int kF = onnx::TensorProto::FLOAT;
constexpr int kI64 = onnx::TensorProto::INT64;

inline std::shared_ptr<ir::Graph> import_graph(const std::string& bytes) {
  auto m = onnx_import::import_model(bytes, "", SessionOptions{});
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? m->graph : nullptr;
}

// Imports `bytes` and runs `passes` (in order, verifying after each) on the graph.
inline std::shared_ptr<ir::Graph> optimized_graph(const std::string& bytes,
                                                  std::vector<std::unique_ptr<Pass>> passes,
                                                  BlockedLayout layout = BlockedLayout::kAuto) {
  auto g = import_graph(bytes);
  if (!g) return nullptr;
  PassManagerOptions o;
  o.level = 1000;  // the passes named here run whatever their level
  o.verify_each_pass = true;
  o.blocked_layout = layout;
  PassManager pm(o);
  for (auto& p : passes) pm.add(std::move(p));
  Status s = pm.run(*g);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return s.ok() ? g : nullptr;
}

inline std::vector<std::unique_ptr<Pass>> pass_list(std::unique_ptr<Pass> p) {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(std::move(p));
  return v;
}

// Runs the graph with reference kernels (so that only the graph differs between two runs).
inline std::vector<Tensor> run_graph(ir::Graph& g, const std::vector<NamedTensor>& inputs) {
  g.for_each_graph([](ir::Graph& sg) {
    for (auto& n : sg.nodes)
      n.kernel = find_kernel(n.op_type, n.domain, n.opset, DType::kUndefined, true);
  });
  std::vector<Value> frame(g.values.size());
  for (const auto& [id, t] : g.initializers) frame[static_cast<size_t>(id)] = Value(t);
  for (const auto& [name, t] : inputs) {
    const int id = g.find_value(name);
    EXPECT_GE(id, 0) << name;
    if (id >= 0) frame[static_cast<size_t>(id)] = Value(t);
  }
  Executor exec({int64_t{1} << 31, 0}, nullptr);
  Status s = exec.run_graph(g, frame);
  EXPECT_TRUE(s.ok()) << s.to_string();
  std::vector<Tensor> out;
  for (int o : g.outputs) out.push_back(frame[static_cast<size_t>(o)].tensor);
  return out;
}

inline void expect_close(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get_as_double(i), y = b.get_as_double(i);
    ASSERT_LE(std::fabs(x - y), 1e-5 * std::max(std::fabs(x), std::fabs(y)) + 1e-6)
        << what << " element " << i << ": " << x << " vs " << y;
  }
}

// Runs the model as imported and after `passes` on the same inputs, expects the same outputs,
// and returns the rewritten graph for the test's structural checks.
inline std::shared_ptr<ir::Graph> expect_pass_preserves(const std::string& bytes,
                                                        std::vector<std::unique_ptr<Pass>> passes,
                                                        const std::vector<NamedTensor>& inputs,
                                                        BlockedLayout layout = BlockedLayout::kAuto) {
  auto before = import_graph(bytes);
  auto after = optimized_graph(bytes, std::move(passes), layout);
  if (!before || !after) return nullptr;
  const auto want = run_graph(*before, inputs);
  const auto got = run_graph(*after, inputs);
  EXPECT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i)
    expect_close(want[i], got[i], "output " + std::to_string(i));
  return after;
}

// The same through the public API: a Session at optimization level 0 and at `level`.
inline void expect_session_levels_agree(const std::string& bytes,
                                        const std::vector<NamedTensor>& inputs, int level = 1,
                                        BlockedLayout layout = BlockedLayout::kAuto) {
  SessionOptions o0, o1;
  o0.optimization_level = 0;
  o1.optimization_level = level;
  o1.blocked_layout = layout;
  auto s0 = Session::load_from_bytes(bytes, o0);
  auto s1 = Session::load_from_bytes(bytes, o1);
  ASSERT_TRUE(s0.ok()) << s0.status().to_string();
  ASSERT_TRUE(s1.ok()) << s1.status().to_string();
  auto r0 = (*s0)->run(inputs);
  auto r1 = (*s1)->run(inputs);
  ASSERT_TRUE(r0.ok()) << r0.status().to_string();
  ASSERT_TRUE(r1.ok()) << r1.status().to_string();
  ASSERT_EQ(r0->size(), r1->size());
  for (size_t i = 0; i < r0->size(); ++i) {
    EXPECT_EQ((*r0)[i].first, (*r1)[i].first);
    expect_close((*r0)[i].second, (*r1)[i].second, "session output " + (*r0)[i].first);
  }
}

inline int count_op(const ir::Graph& g, const std::string& op) {
  auto c = op_counts(g);
  auto it = c.find(op);
  return it == c.end() ? 0 : it->second;
}

// n floats start, start + step, ... repeating every `period` values (weights for test models).
inline std::vector<float> cyclic_values(size_t n, float start, float step, size_t period) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % period);
  return v;
}

// Cosine similarity of two float32 tensors of one size (0 when either is all zeros).
inline double cosine(const Tensor& a, const Tensor& b) {
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double p = a.data<float>()[i], q = b.data<float>()[i];
    dot += p * q, na += p * p, nb += q * q;
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

// Runs a fast-mode and an exact-mode session of one model on `in` twice (the recording run,
// then the planned one) and expects their first outputs float32, of one shape, and within
// cosine 0.999 of each other.
inline void expect_fast_close_to_exact(const Session& fast, const Session& exact,
                                       const std::vector<NamedTensor>& in) {
  for (int round = 0; round < 2; ++round) {
    auto yf = fast.run(in);
    auto ye = exact.run(in);
    ASSERT_TRUE(yf.ok()) << yf.status().to_string();
    ASSERT_TRUE(ye.ok()) << ye.status().to_string();
    const Tensor &a = (*yf)[0].second, &b = (*ye)[0].second;
    ASSERT_EQ(a.dtype(), DType::kFloat32);
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_GE(cosine(a, b), 0.999);
  }
}

inline Tensor ramp(Shape shape, float start = -1.0f, float step = 0.37f) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = start + step * static_cast<float>(i % 11);
  return t;
}

inline onnx::TensorProto& int64_initializer(ModelBuilder& m, const std::string& name,
                                            std::vector<int64_t> dims,
                                            std::vector<int64_t> values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
  return *t;
}

// An initializer of a type stored in int32_data (INT8, UINT8, INT32, ...) holding `values`.
inline onnx::TensorProto& typed_initializer(ModelBuilder& m, const std::string& name, int type,
                                            std::vector<int64_t> dims, std::vector<int> values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  for (int v : values) t->add_int32_data(v);
  return *t;
}

// Adds a GRAPH attribute `attr` to `node` holding a one-output subgraph; returns the subgraph.
inline onnx::GraphProto& add_branch(onnx::NodeProto& node, const std::string& attr,
                                    const std::string& output) {
  auto* a = node.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name(attr);
  auto* o = g->add_output();
  o->set_name(output);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return *g;
}

inline onnx::NodeProto& add_subgraph_node(onnx::GraphProto& g, const std::string& op,
                                          std::vector<std::string> ins,
                                          std::vector<std::string> outs) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + outs[0]);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return *n;
}

inline Tensor bool_scalar(bool v) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = v;
  return t;
}

}  // namespace osprey::passes::testing
