// The batched 2-D transpose on 8 x 8 register tiles: which permutations reduce to it (size-1
// axes left out, neighbouring axes merged), and the Transpose kernel on them against the
// reference, bit for bit: tails in both dims, batches, a YOLO head's 5-D permutation, NCHW <->
// NHWC, one and two threads.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "kernels/cpu/transpose_tiles.h"

namespace osprey::testing {
namespace {

TEST(CpuTransposeTiles, PermutationsReduceToBatchedTransposes) {
  int64_t b = 0, m = 0, n = 0;
  ASSERT_TRUE(cpu::batched_transpose_view({1, 3, 85, 40, 40}, {0, 1, 3, 4, 2}, &b, &m, &n));
  EXPECT_EQ(b, 3);
  EXPECT_EQ(m, 85);
  EXPECT_EQ(n, 1600);
  ASSERT_TRUE(cpu::batched_transpose_view({2, 64, 7, 9}, {0, 2, 3, 1}, &b, &m, &n));
  EXPECT_EQ(b, 2);
  EXPECT_EQ(m, 64);
  EXPECT_EQ(n, 63);
  ASSERT_TRUE(cpu::batched_transpose_view({5, 6}, {1, 0}, &b, &m, &n));
  EXPECT_EQ(b, 1);
  EXPECT_EQ(m, 5);
  EXPECT_EQ(n, 6);
  ASSERT_TRUE(cpu::batched_transpose_view({1, 7, 1, 9}, {3, 2, 1, 0}, &b, &m, &n));  // size-1 axes
  EXPECT_EQ(m, 7);
  EXPECT_EQ(n, 9);
  EXPECT_FALSE(cpu::batched_transpose_view({1, 128, 12, 64}, {0, 2, 1, 3}, &b, &m, &n));  // rows move
  EXPECT_FALSE(cpu::batched_transpose_view({4, 1, 5}, {0, 2, 1}, &b, &m, &n));           // a copy
  EXPECT_FALSE(cpu::batched_transpose_view({2, 3, 4}, {2, 1, 0}, &b, &m, &n));           // 3 groups reversed
}

TEST(CpuTransposeTiles, TransposeMatchesTheReferenceBitForBit) {
  // (Without AVX2 the same cases run oneDNN's reorder, and must give the same bits.)
  ThreadPool pool2(2);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{1, 3, 85, 40, 40}, {0, 1, 3, 4, 2}}, {{2, 64, 7, 9}, {0, 2, 3, 1}}, {{1, 9, 11, 13}, {0, 3, 1, 2}},
      {{5, 6}, {1, 0}},                      {{8, 8}, {1, 0}},              {{3, 17, 8}, {0, 2, 1}},
      {{1, 7, 1, 9}, {3, 2, 1, 0}},          {{2, 1, 300, 5}, {0, 3, 1, 2}}};
  for (const auto& [shape, perm] : cases) {
    SCOPED_TRACE(shape_to_string(shape));
    const Attrs attrs = {{"perm", ints_attr(perm)}};
    NodeRunner ref("Transpose", "", 13, attrs, Device::ref);
    NodeRunner fast("Transpose", "", 13, attrs, Device::cpu, {Tensor()});
    expect_same_as_reference(ref, fast, {awkward_tensor(shape, 9)}, &pool2);
  }
}

}  // namespace
}  // namespace osprey::testing
