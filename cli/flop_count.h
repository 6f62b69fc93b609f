// FLOPs of one inference, counted from the shapes each node saw in a profiled run
// (Session::run with a RunProfile). Only the multiply-accumulate work of the compute-bound ops is
// counted, 1 multiply-add = 2 FLOPs; bias, residual and activation work is not:
//
//   Conv, com.osprey FusedConv   2 * numel(Y) * numel(W) / W[0]      (Cin/group * kernel size
//                                                                    MACs per output; any layout)
//   ConvTranspose                2 * numel(X) * numel(W) / W[0]      (Cout/group * kernel size
//                                                                    MACs per input element)
//   Gemm                         2 * numel(Y) * numel(A) / Y[0]      (K = numel(A) / M)
//   MatMul, com.osprey FusedMatMul  2 * numel(Y) * A[-1]             (K = A's last dim)
//
// Every other op counts 0 (and is not "counted"). A counted op whose shapes are missing (a
// non-tensor input, a rank the formula needs) is "unknown", never guessed.
#pragma once

#include <vector>

#include "osprey/session.h"

namespace osprey::cli {

enum class FlopStatus { kNotCounted, kCounted, kShapesUnknown };

struct NodeFlops {
  FlopStatus status = FlopStatus::kNotCounted;
  double flops = 0;
};

NodeFlops count_node_flops(const NodeTiming& node);

struct GraphFlops {
  double flops = 0;  // sum over counted nodes
  int counted_nodes = 0;
  int unknown_nodes = 0;  // counted op types whose shapes were missing
};

GraphFlops count_flops(const std::vector<NodeTiming>& nodes);

}  // namespace osprey::cli
