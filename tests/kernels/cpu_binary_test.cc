// Add, Sub, Mul, Div, Max, Min, Sum and Mean on the CPU binary kernel against the reference, bit
// for bit (the variadic ones folded over two to four inputs): same shapes, per-channel and
// per-row operands, scalars on either side, both sides broadcast, size-1 and missing dimensions, rows long enough to be split into pieces, empty outputs,
// NaN, infinities and zero divisors, one and two threads, every ISA variant of the row kernel;
// and the calls handed to the reference (mixed types, shapes that do not broadcast).
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_harness.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

using cpu::BinaryOp;
using cpu::VectorIsa;

TEST(CpuBinary, MatchesTheReferenceBitForBitOnBroadcastsAndThreads) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 128, 20, 20}, {1, 128, 20, 20}}, {{1, 256, 40, 40}, {1, 256, 1, 1}}, {{2, 7, 768}, {768}},
      {{2, 3, 5}, {}},                      {{}, {2, 3, 5}},                    {{3, 1, 5}, {1, 4, 1}},
      {{4, 1}, {4, 6}},                     {{1, 20000}, {1}},                  {{2, 3, 20000}, {3, 1}},
      {{5}, {5}},                           {{1, 1, 1}, {1}},                   {{2, 0, 3}, {1, 3}},
      {{6, 1, 7, 1}, {6, 5, 7, 3}},         {{2, 3, 4, 5}, {3, 1, 5}}};
  ThreadPool pool2(2);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (const auto& [sa, sb] : cases) {
      SCOPED_TRACE(std::string(op) + " " + shape_to_string(sa) + " " + shape_to_string(sb));
      const std::vector<Tensor> in = {awkward_tensor(sa, 3), awkward_tensor(sb, 5)};
      NodeRunner ref(op, "", 14, {}, Device::ref);
      NodeRunner fast(op, "", 14, {}, Device::cpu);
      expect_same_as_reference(ref, fast, in, &pool2);
    }
  }
}

TEST(CpuBinary, VariadicOpsFoldAsTheReferenceBitForBit) {
  const std::vector<std::vector<Shape>> cases = {
      {{2, 3, 5}, {2, 3, 5}},
      {{2, 3, 5}, {2, 3, 5}, {2, 3, 5}},
      {{2, 1, 5}, {3, 1}, {1, 3, 5}, {5}},
      {{1, 64, 20, 20}, {1, 64, 1, 1}, {1, 64, 20, 20}},
      {{}, {4, 2}},
  };
  ThreadPool pool2(2);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    for (const auto& shapes : cases) {
      std::string trace = op;
      std::vector<Tensor> in;
      for (size_t i = 0; i < shapes.size(); ++i) {
        trace += " " + shape_to_string(shapes[i]);
        in.push_back(awkward_tensor(shapes[i], static_cast<uint32_t>(7 + i)));
      }
      SCOPED_TRACE(trace);
      NodeRunner ref(op, "", 13, {}, Device::ref);
      NodeRunner fast(op, "", 13, {}, Device::cpu);
      expect_same_as_reference(ref, fast, in, &pool2);
    }
  }
}

TEST(CpuBinary, RowKernelMatchesScalarArithmeticOnEveryIsa) {
  for (VectorIsa isa : runnable_isas()) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv, BinaryOp::kMax, BinaryOp::kMin}) {
      for (int64_t n : {1, 15, 16, 33, 100}) {
        for (int pattern = 0; pattern < 4; ++pattern) {
          const bool a_vec = pattern & 1, b_vec = pattern & 2;
          SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " op " + std::to_string(static_cast<int>(op)) +
                       " n " + std::to_string(n) + " pattern " + std::to_string(pattern));
          const Tensor a = awkward_tensor({n}, 7), b = awkward_tensor({n}, 9);
          std::vector<float> y(static_cast<size_t>(n));
          cpu::binary_row(isa, op, a.data<float>(), a_vec, b.data<float>(), b_vec, y.data(), n);
          int64_t wrong = 0;
          for (int64_t k = 0; k < n; ++k) {
            const float x = a.data<float>()[a_vec ? k : 0], z = b.data<float>()[b_vec ? k : 0];
            const bool nan = std::isnan(x) || std::isnan(z);
            const float want = op == BinaryOp::kAdd   ? x + z
                               : op == BinaryOp::kSub ? x - z
                               : op == BinaryOp::kMul ? x * z
                               : op == BinaryOp::kDiv ? x / z
                               : nan                  ? (std::isnan(x) ? x : z)
                               : op == BinaryOp::kMax ? (x < z ? z : x)
                                                      : (z < x ? z : x);
            wrong += std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(y[static_cast<size_t>(k)]);
          }
          EXPECT_EQ(wrong, 0);
        }
      }
    }
  }
}

TEST(CpuBinary, MixedTypesAndBadShapesGetTheReferenceErrors) {
  NodeRunner fast("Add", "", 14, {}, Device::cpu);
  ASSERT_TRUE(fast.found());
  auto mixed = fast.run({random_tensor({2, 3}, 1), vec<int32_t>({1, 2, 3})});
  ASSERT_FALSE(mixed.ok());
  auto bad = fast.run({random_tensor({2, 3}, 1), random_tensor({4}, 2)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("broadcast"), std::string::npos) << bad.status().to_string();
  NodeRunner legacy("Mul", "", 6, {{"broadcast", int_attr(1)}}, Device::cpu);
  EXPECT_FALSE(legacy.found());  // opsets before 7 stay on the reference
  // Max of one input runs the reference.
  NodeRunner max_ref("Max", "", 13, {}, Device::ref);
  NodeRunner max_cpu("Max", "", 13, {}, Device::cpu);
  ThreadPool pool2(2);
  expect_same_as_reference(max_ref, max_cpu, {awkward_tensor({2, 3}, 1)}, &pool2);
  // Inputs of different types: the reference's error.
  NodeRunner sum_cpu("Sum", "", 13, {}, Device::cpu);
  EXPECT_FALSE(sum_cpu.run({random_tensor({2, 3}, 1), vec<int32_t>({1, 2, 3})}).ok());
}

}  // namespace
}  // namespace osprey::testing
