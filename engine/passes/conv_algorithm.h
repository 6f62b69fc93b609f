// SessionOptions::winograd applied to a graph: every float32 Conv and FusedConv (in the main
// graph and in subgraphs) with constant 3x3 weights, one group, stride 1 and dilation 1 gets
// the attribute winograd = 1 (kAuto: only those with 64 or more input and output channels,
// cpu::kWinogradMinChannels, where it was measured to pay) or 2 (kOn: all of them), which the
// oneDNN convolution kernel reads (conv_dnnl.cc): it then runs
// oneDNN's Winograd algorithm when oneDNN offers one for the shape, and the direct one
// otherwise. Fast mode's bf16 convolutions are left alone (runs after apply_precision).
#pragma once

#include "ir/graph.h"
#include "osprey/options.h"

namespace osprey::passes {

inline constexpr const char* kWinogradAttr = "winograd";

// Returns the number of nodes marked; level 0 (the reference kernels) marks none.
int apply_winograd(ir::Graph& g, Winograd policy, int optimization_level);

}  // namespace osprey::passes
