// The session's precision mode applied to a graph: in fast mode every Conv, FusedConv, MatMul,
// FusedMatMul and Gemm (in the main graph and in subgraphs) gets the attribute
// compute_precision = "bf16", which the oneDNN kernels read (bf16 operands, float32
// accumulation and outputs). Other ops are left alone: they stay float32.
#pragma once

#include "ir/graph.h"
#include "osprey/options.h"
#include "osprey/status.h"

namespace osprey::passes {

inline constexpr const char* kComputePrecisionAttr = "compute_precision";

// Fails with kFailedPrecondition when fast mode cannot be honoured: optimization level 0 (the
// reference kernels, which compute in float32 only) or a CPU without native bf16 (see
// cpu::bf16_compute_available). Exact mode changes nothing. Returns the number of nodes marked.
Result<int> apply_precision(ir::Graph& g, Precision precision, int optimization_level);

}  // namespace osprey::passes
