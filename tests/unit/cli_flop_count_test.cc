// The FLOP counter of `osprey bench --peak` on hand-computed nodes and small graphs.
#include <gtest/gtest.h>

#include "flop_count.h"

namespace osprey::cli {
namespace {

NodeTiming node(const std::string& op, std::vector<Shape> in, std::vector<Shape> out,
                const std::string& domain = "") {
  NodeTiming n;
  n.op_type = op;
  n.domain = domain;
  n.input_shapes = std::move(in);
  n.output_shapes = std::move(out);
  return n;
}

TEST(FlopCount, ConvCountsMultiplyAddsPerOutput) {
  // x [1,3,8,8], W [16,3,3,3], Y [1,16,6,6]: 576 outputs x 27 MACs.
  auto f = count_node_flops(node("Conv", {{1, 3, 8, 8}, {16, 3, 3, 3}, {16}}, {{1, 16, 6, 6}}));
  EXPECT_EQ(f.status, FlopStatus::kCounted);
  EXPECT_EQ(f.flops, 2.0 * 576 * 27);
  // Grouped (depthwise): W [8,1,3,3], Y [2,8,4,4]: 256 outputs x 9 MACs.
  EXPECT_EQ(count_node_flops(node("Conv", {{2, 8, 6, 6}, {8, 1, 3, 3}}, {{2, 8, 4, 4}})).flops,
            2.0 * 256 * 9);
  // FusedConv, channels last (Y [1,6,6,16]): the same count as NCHW.
  EXPECT_EQ(count_node_flops(
                node("FusedConv", {{1, 8, 8, 3}, {16, 3, 3, 3}}, {{1, 6, 6, 16}}, "com.osprey"))
                .flops,
            2.0 * 576 * 27);
}

TEST(FlopCount, AttentionCountsBothProducts) {
  // Q [2,5,12] (3 heads of 4), K and V [2,7,12]: 2 x (2*3*5*7*4) MACs.
  auto f = count_node_flops(
      node("Attention", {{2, 5, 12}, {2, 7, 12}, {2, 7, 12}}, {{2, 5, 12}}, "com.osprey"));
  EXPECT_EQ(f.status, FlopStatus::kCounted);
  EXPECT_EQ(f.flops, 2.0 * 2 * (2 * 3 * 5 * 7 * 4));
  EXPECT_EQ(count_node_flops(node("Attention", {{2, 5, 12}, {7, 12}}, {{2, 5, 12}}, "com.osprey"))
                .status,
            FlopStatus::kShapesUnknown);
  // Q, K and V packed in one [2,5,36] input (K and V absent: empty shapes): Sk = Sq = 5.
  auto packed =
      count_node_flops(node("Attention", {{2, 5, 36}, {}, {}}, {{2, 5, 12}}, "com.osprey"));
  EXPECT_EQ(packed.status, FlopStatus::kCounted);
  EXPECT_EQ(packed.flops, 2.0 * 2 * (2 * 3 * 5 * 5 * 4));
}

TEST(FlopCount, ConvTransposeCountsPerInputElement) {
  // x [1,4,3,3], W [4,2,2,2] (Cin=4, Cout=2): 36 input elements x 8 MACs.
  auto f = count_node_flops(node("ConvTranspose", {{1, 4, 3, 3}, {4, 2, 2, 2}}, {{1, 2, 6, 6}}));
  EXPECT_EQ(f.status, FlopStatus::kCounted);
  EXPECT_EQ(f.flops, 2.0 * 36 * 8);
}

TEST(FlopCount, GemmAndMatMul) {
  // Gemm A [5,7] (or transposed [7,5]) x B -> Y [5,9]: 45 outputs x K=7.
  EXPECT_EQ(count_node_flops(node("Gemm", {{5, 7}, {7, 9}, {9}}, {{5, 9}})).flops, 2.0 * 45 * 7);
  EXPECT_EQ(count_node_flops(node("Gemm", {{7, 5}, {9, 7}}, {{5, 9}})).flops, 2.0 * 45 * 7);
  // Batched MatMul [2,3,4,5] x [5,6] -> [2,3,4,6]: 144 outputs x K=5.
  EXPECT_EQ(count_node_flops(node("MatMul", {{2, 3, 4, 5}, {5, 6}}, {{2, 3, 4, 6}})).flops,
            2.0 * 144 * 5);
  // Vector . vector -> scalar: K = 8.
  EXPECT_EQ(count_node_flops(node("MatMul", {{8}, {8}}, {{}})).flops, 2.0 * 8);
  EXPECT_EQ(
      count_node_flops(node("FusedMatMul", {{4, 10}, {10, 3}, {3}}, {{4, 3}}, "com.osprey")).flops,
      2.0 * 12 * 10);
}

TEST(FlopCount, OtherOpsAndMissingShapes) {
  EXPECT_EQ(count_node_flops(node("Relu", {{4, 4}}, {{4, 4}})).status, FlopStatus::kNotCounted);
  // An ONNX op name in another domain is not the ONNX op.
  EXPECT_EQ(
      count_node_flops(node("Conv", {{1, 1, 3, 3}, {1, 1, 1, 1}}, {{1, 1, 3, 3}}, "x.y")).status,
      FlopStatus::kNotCounted);
  EXPECT_EQ(count_node_flops(node("Conv", {{1, 3, 8, 8}}, {{1, 16, 6, 6}})).status,
            FlopStatus::kShapesUnknown);
  EXPECT_EQ(count_node_flops(node("Gemm", {{5, 7}, {7, 9}}, {})).status,
            FlopStatus::kShapesUnknown);
}

TEST(FlopCount, SmallGraphSumsItsComputeNodes) {
  // Conv [1,1,4,4] * W [2,1,3,3] -> [1,2,2,2]  (8 x 9 MACs), Relu, Flatten -> [1,8],
  // Gemm [1,8] x [8,4] -> [1,4] (4 x 8 MACs), a MatMul whose shapes are missing.
  std::vector<NodeTiming> g = {
      node("Conv", {{1, 1, 4, 4}, {2, 1, 3, 3}}, {{1, 2, 2, 2}}),
      node("Relu", {{1, 2, 2, 2}}, {{1, 2, 2, 2}}),
      node("Flatten", {{1, 2, 2, 2}}, {{1, 8}}),
      node("Gemm", {{1, 8}, {8, 4}, {4}}, {{1, 4}}),
      node("MatMul", {}, {}),
  };
  const GraphFlops f = count_flops(g);
  EXPECT_EQ(f.flops, 2.0 * (8 * 9 + 4 * 8));
  EXPECT_EQ(f.counted_nodes, 2);
  EXPECT_EQ(f.unknown_nodes, 1);
}

}  // namespace
}  // namespace osprey::cli
