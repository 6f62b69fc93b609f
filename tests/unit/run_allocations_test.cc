// Heap allocations on the run path (counted by the binary's operator new, counting_new.h).
// A warm run of a static-shape convolutional model makes the same, small number of heap
// allocations every time: the oneDNN arguments are bound through memory objects kept per thread,
// the scratchpad is the thread's, cache keys and the executor's node buffers are reused, and the
// initializers are read in place. What is left per run is listed in kRunBudget below. The same
// holds for a convolution in our Winograd form.
#include <gtest/gtest.h>

#include <vector>

#include "counting_new.h"
#include "kernels/cpu/conv_winograd_nhwc.h"
#include "model_builder.h"
#include "osprey/session.h"
#include "test_models.h"

namespace osprey::testing {
namespace {

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i % 13) - 6.0f) / 6.0f;
  return v;
}

void ints(onnx::NodeProto& n, const char* name, std::vector<int64_t> values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// x [1,8,16,16] -> Conv 3x3 (16) + Relu -> Conv 1x1 (16) + residual Add + Relu -> MaxPool 2x2
// -> Conv 1x1 (8) -> Flatten -> MatMul [2048, 10] -> y: after the passes five nodes run on oneDNN
// (three channels-last FusedConv, the pool, the product) between two Transposes.
std::string conv_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16}).output("y");
  m.initializer("W1", {16, 8, 3, 3}, pattern(16 * 8 * 9, 0.2f));
  m.initializer("B1", {16}, pattern(16, 0.1f));
  m.initializer("W2", {16, 16, 1, 1}, pattern(16 * 16, 0.3f));
  m.initializer("W3", {8, 16, 1, 1}, pattern(8 * 16, 0.3f));
  m.initializer("Wf", {512, 10}, pattern(512 * 10, 0.05f));
  ints(m.node("Conv", {"x", "W1", "B1"}, {"c1"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  m.node("Conv", {"r1", "W2"}, {"c2"});
  m.node("Add", {"c2", "r1"}, {"s"});
  m.node("Relu", {"s"}, {"r2"});
  auto& pool = m.node("MaxPool", {"r2"}, {"p"});
  ints(pool, "kernel_shape", {2, 2});
  ints(pool, "strides", {2, 2});
  m.node("Conv", {"p", "W3"}, {"c3"});
  m.node("Flatten", {"c3"}, {"f"});
  m.node("MatMul", {"f", "Wf"}, {"y"});
  return m.bytes();
}

// Per warm run (93 measured; 94 before in-place outputs): about three allocations per node
// output (its shape, the arena slot's owner, the copy a kernel keeps of its output tensor),
// about six inside each of the seven oneDNN executions (the library's own argument map, not
// reachable from outside it), and the run's own bookkeeping (frame, feeds, plan state, result).
// MobileNetV2 (osprey bench, counted with an interposed malloc) went from 1,899 per run to 604
// with the argument binding.
constexpr int64_t kRunBudget = 100;

// Three warm-up runs, then five counted ones: each allocates the same number of times, at most
// `budget`, and gives the same output. Returns that number.
int64_t warm_run_allocations(const std::string& model, const Shape& shape, int64_t budget) {
  auto s = load_test_session(model, 2);
  EXPECT_TRUE(s);
  if (!s) return -1;
  Tensor x(DType::kFloat32, shape);
  const auto v = pattern(static_cast<size_t>(x.numel()), 1.0f);
  std::copy(v.begin(), v.end(), x.data<float>());
  const std::vector<NamedTensor> feeds = {{"x", x}};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(s->run(feeds).ok());  // record the plan, warm caches
  std::vector<int64_t> counts;
  Tensor first;
  for (int i = 0; i < 5; ++i) {
    const int64_t before = thread_heap_allocations();
    auto out = s->run(feeds);
    const int64_t made = thread_heap_allocations() - before;
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok()) return -1;
    counts.push_back(made);
    if (i == 0) first = (*out)[0].second;
    else
      for (int64_t k = 0; k < first.numel(); ++k)
        EXPECT_EQ((*out)[0].second.data<float>()[k], first.data<float>()[k]) << k;
  }
  for (int64_t c : counts) {
    EXPECT_EQ(c, counts.front()) << "a warm run allocated a different amount";
    EXPECT_LE(c, budget);
  }
  std::printf("heap allocations per warm run: %lld\n", static_cast<long long>(counts.front()));
  return counts.front();
}

TEST(RunAllocations, WarmRunsOfAStaticModelAllocateTheSameSmallAmount) {
  warm_run_allocations(conv_model(), {1, 8, 16, 16}, kRunBudget);
}

// x [1,64,14,14] -> Conv 3x3 (64, pads 1) + Relu -> y: on AVX-512 the convolution runs in our
// Winograd form (conv_winograd_nhwc.h), whose scratch is the thread's kept buffer.
std::string winograd_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 64, 14, 14}).output("y");
  m.initializer("W", {64, 64, 3, 3}, pattern(64 * 64 * 9, 0.05f));
  m.initializer("B", {64}, pattern(64, 0.1f));
  ints(m.node("Conv", {"x", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"y"});
  return m.bytes();
}

// A one-convolution model: its node outputs and the run's bookkeeping (46 measured; 66 with the
// form held off, on oneDNN's Winograd primitive and the reorders around it).
constexpr int64_t kWinogradRunBudget = 50;

TEST(RunAllocations, WarmRunsOfAWinogradConvolutionAllocateTheSameSmallAmount) {
  const int64_t before = cpu::winograd_nhwc_convolutions_run();
  warm_run_allocations(winograd_model(), {1, 64, 14, 14}, kWinogradRunBudget);
  if (cpu::panel_product_supported()) {
    EXPECT_EQ(cpu::winograd_nhwc_convolutions_run() - before, 8) << "the Winograd form did not run";
  }
}

}  // namespace
}  // namespace osprey::testing
