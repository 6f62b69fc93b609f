// Fast CPU MatMul / Gemm / FusedMatMul (oneDNN) against the reference kernels: batch
// broadcasting, 1-D operands, K/N off multiples of 16, transposes, alpha/beta and every C
// broadcast, prepared (constant B) and computed B, thread counts 1 and 2, the per-shape cache
// and concurrent runs on one prepared node.
#include <gtest/gtest.h>

#include <thread>

#include "cpu_test_harness.h"
#include "kernels/cpu/dnnl_common.h"

namespace osprey::testing {
namespace {

// Runs `op` with the fast kernel, prepared with constant B (input 1) and unprepared, at 1 and
// 2 threads, and compares each with the reference kernel.
void check_against_reference(const std::string& op, const std::string& domain, const Attrs& attrs,
                             const std::vector<Tensor>& in) {
  static ThreadPool pool2(2);
  const int opset = domain.empty() ? 13 : 1;
  NodeRunner ref(op, domain, opset, attrs, Device::ref);
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  std::vector<Tensor> constants(in.size());
  constants[1] = in[1];
  NodeRunner prepared(op, domain, opset, attrs, Device::cpu, constants);
  NodeRunner computed(op, domain, opset, attrs, Device::cpu);
  ASSERT_TRUE(prepared.found());
  ASSERT_TRUE(prepared.prepare_status().ok()) << prepared.prepare_status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &computed}) {
      auto got = r->run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *want);
    }
}

TEST(CpuMatMul, Registered) {
  for (const char* op : {"MatMul", "Gemm"}) {
    const KernelDef* k = find_kernel(op, "", 13, DType::kFloat32, false);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->device, Device::cpu) << op;
  }
  const KernelDef* i = find_kernel("MatMul", "", 13, DType::kInt32, false);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->device, Device::ref);
}

TEST(CpuMatMul, MatchesReferenceOnAwkwardShapes) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5}, {5, 7}},
      {{2, 3, 17, 33}, {33, 19}},     // batch folded into M, B constant 2-D
      {{2, 1, 4, 6}, {3, 6, 5}},      // broadcast batch dims on both sides
      {{4, 6}, {2, 6, 3}},            // A broadcast over B's batch
      {{2, 3, 5, 4}, {2, 3, 4, 18}},  // equal batch dims
      {{7}, {7, 3}},                  // 1-D A
      {{2, 5, 7}, {7}},               // 1-D B
      {{1, 1}, {1, 1}},
      {{1, 130}, {130, 1}},
      {{3, 0}, {0, 4}},  // K = 0: zeros
  };
  uint32_t seed = 1;
  for (const auto& [a, b] : shapes) {
    SCOPED_TRACE(shape_to_string(a) + " x " + shape_to_string(b));
    check_against_reference("MatMul", "", {}, {random_tensor(a, seed), random_tensor(b, seed + 1)});
    seed += 2;
  }
}

TEST(CpuMatMul, CacheServesSeveralShapesAndOverriddenWeights) {
  const Tensor b = random_tensor({24, 17}, 1), other = random_tensor({24, 17}, 2);
  NodeRunner fast("MatMul", "", 13, {}, Device::cpu, {Tensor(), b});
  NodeRunner ref("MatMul", "", 13, {}, Device::ref);
  uint32_t seed = 3;
  for (Shape s : {Shape{4, 24}, Shape{9, 24}, Shape{2, 3, 24}, Shape{4, 24}}) {
    const Tensor a = random_tensor(s, seed++);
    for (const Tensor& w : {b, other}) {
      auto got = fast.run({a, w});
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *ref.run({a, w}));
    }
  }
}

TEST(CpuMatMul, ConcurrentRunsOnOnePreparedNodeAgree) {
  const Tensor b = random_tensor({64, 48}, 1), a = random_tensor({2, 33, 64}, 2);
  NodeRunner fast("MatMul", "", 13, {}, Device::cpu, {Tensor(), b});
  ThreadPool pool(2);
  auto first = fast.run({a, b}, &pool);
  ASSERT_TRUE(first.ok());
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto r = fast.run({a, b}, &pool);
        if (!r.ok() || !bit_equal(*r, *first)) ++mismatches[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(CpuMatMul, BadShapesAreClearErrors) {
  NodeRunner fast("MatMul", "", 13, {}, Device::cpu);
  expect_invalid(fast.run({random_tensor({2, 3}, 1), random_tensor({4, 5}, 2)}),
                 "inner dimensions");
  expect_invalid(fast.run({random_tensor({2, 2, 3}, 1), random_tensor({3, 3, 5}, 2)}), "");
}

TEST(CpuGemm, MatchesReferenceForTransposesScalesAndEveryC) {
  const int64_t M = 5, K = 19, N = 21;
  uint32_t seed = 40;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (Shape c : {Shape{}, Shape{N}, Shape{1, N}, Shape{M, 1}, Shape{M, N}, Shape{1}})
        for (auto [alpha, beta] :
             {std::pair{1.0f, 1.0f}, {0.5f, 1.0f}, {1.0f, -2.0f}, {1.5f, 0.0f}}) {
          SCOPED_TRACE(str_cat("transA=", ta, " transB=", tb, " C=", shape_to_string(c),
                               " alpha=", alpha, " beta=", beta));
          const Attrs attrs = {{"transA", int_attr(ta)},
                               {"transB", int_attr(tb)},
                               {"alpha", float_attr(alpha)},
                               {"beta", float_attr(beta)}};
          const Tensor a = random_tensor(ta ? Shape{K, M} : Shape{M, K}, seed++);
          const Tensor b = random_tensor(tb ? Shape{N, K} : Shape{K, N}, seed++);
          check_against_reference("Gemm", "", attrs, {a, b, random_tensor(c, seed++)});
        }
  check_against_reference("Gemm", "", {}, {random_tensor({3, 4}, 1), random_tensor({4, 2}, 2)});
}

TEST(CpuGemm, BadCIsAClearError) {
  NodeRunner fast("Gemm", "", 13, {}, Device::cpu);
  expect_invalid(
      fast.run({random_tensor({2, 3}, 1), random_tensor({3, 4}, 2), random_tensor({3, 4}, 3)}),
      "cannot be broadcast");
}

// A thread's map of bound memory objects starts again when full, before an execution binds
// its arguments: with a capacity below one execution's argument count, every execution finds
// it full. Clearing it in the middle of binding freed the objects just bound (a crash under
// AddressSanitizer once a long test run had filled the map).
TEST(CpuMatMul, BoundMemoryMapRestartsBetweenExecutionsNotDuringOne) {
  cpu::set_bound_memory_capacity(2);
  uint32_t seed = 90;
  for (Shape a : {Shape{3, 16}, Shape{2, 5, 16}, Shape{1, 16}}) {
    SCOPED_TRACE(shape_to_string(a));
    const Shape z = a.size() == 3 ? Shape{a[0], a[1], 12} : Shape{a[0], 12};
    check_against_reference("FusedMatMul", "com.osprey", {},
                            {random_tensor(a, seed), random_tensor({16, 12}, seed + 1),
                             random_tensor({12}, seed + 2), random_tensor(z, seed + 3)});
    seed += 4;
  }
  cpu::set_bound_memory_capacity(4096);
}

// ---- FusedMatMul: Y = act(A . B + bias + Z)

TEST(CpuFusedMatMul, MatchesReferenceWithBiasResidualAndActivations) {
  ASSERT_NE(find_kernel("FusedMatMul", "com.osprey", 1, DType::kFloat32, true), nullptr);
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"", {}},
      {"Relu", {}},
      {"Gelu", {}},
      {"GeluTanh", {}},
      {"Clip", {-0.2f, 0.3f}},
      {"LeakyRelu", {0.2f}},
      {"HardSigmoid", {0.2f, 0.5f}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"Silu", {}},
      {"HardSwish", {}}};
  uint32_t seed = 70;
  for (const auto& [act, params] : acts)
    for (int tb = 0; tb < 2; ++tb)
      for (bool with_z : {false, true}) {
        SCOPED_TRACE(str_cat(act, " trans_b=", tb, with_z ? " +Z" : ""));
        Attrs attrs = {{"trans_b", int_attr(tb)}, {"activation", string_attr(act)}};
        if (!params.empty()) attrs["activation_params"] = floats_attr(params);
        const Tensor a = random_tensor({2, 7, 37}, seed++);
        const Tensor b = random_tensor(tb ? Shape{29, 37} : Shape{37, 29}, seed++);
        const Tensor z = with_z ? random_tensor({2, 7, 29}, seed++) : Tensor();
        check_against_reference("FusedMatMul", "com.osprey", attrs,
                                {a, b, random_tensor({29}, seed++), z});
      }
  check_against_reference("FusedMatMul", "com.osprey", {},
                          {random_tensor({5}, 1), random_tensor({5, 3}, 2)});
}

TEST(CpuFusedMatMul, BadInputsAreClearErrors) {
  NodeRunner fast("FusedMatMul", "com.osprey", 1, {}, Device::cpu);
  expect_invalid(
      fast.run({random_tensor({2, 4}, 1), random_tensor({4, 3}, 2), random_tensor({4}, 3)}),
      "bias has shape");
  expect_invalid(fast.run({random_tensor({2, 4}, 1), random_tensor({2, 4, 3}, 2)}),
                 "B must be 2-D");
  NodeRunner act("FusedMatMul", "com.osprey", 1, {{"activation", string_attr("Nope")}},
                 Device::cpu);
  expect_invalid(act.run({random_tensor({2, 4}, 1), random_tensor({4, 3}, 2)}),
                 "unknown activation");
}

}  // namespace
}  // namespace osprey::testing
