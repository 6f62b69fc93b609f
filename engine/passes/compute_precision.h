// The session's precision mode applied to a graph: in fast mode every Conv, FusedConv, MatMul,
// FusedMatMul and Gemm (in the main graph and in subgraphs), and every com.osprey Attention on
// a CPU with avx512_bf16, gets the attribute compute_precision = "bf16", which the CPU kernels
// read (bf16 operands, float32 accumulation and outputs; the attention's softmax stays
// float32). Other ops are left alone: they stay float32, and so does a small image stem: a
// convolution over a graph input (or a Transpose / Reshape of one) with at most 4 channels per
// group and 9 taps. Rounding the caller's image to bfloat16 was the largest error of
// EfficientNet-Lite0's fast mode (its lowest per-image cosine on the zoo's photo crops 0.99925
// -> 0.99974 with the stem in float32), and such a stem ran faster in float32 too (0.17
// against 0.20-0.22 ms on a Xeon with AMX). ResNet50's 7x7 stem stays bf16 (1.45 ms in float32
// against 0.40, and no accuracy to gain: 0.99990 either way). Between fast-mode
// FusedConvs the activations then stay bfloat16 (keep_bf16_between_convs).
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

// In one graph (not its subgraphs): the output Y of a FusedConv marked bf16 that only FusedConvs
// marked bf16 read, as their X or residual Z, and that is neither a graph output nor read by a
// subgraph, becomes bfloat16: its producer gets bf16_output = 1 (Y, and its own Z, bfloat16),
// the readers that take it as X get bf16_input = 1, and the value's declared type changes.
// A node's Z and Y always end up of one type. A channels-last com.osprey MaxPool passes
// bfloat16 through: its X and Y become bfloat16 together when its X is such a FusedConv output
// and its Y is read only as above (ResNet's stem pool, between the stem and layer 1). Saves each
// reader's per-run conversion of its source and halves the activations' bytes. Returns the
// number of values made bfloat16.
int keep_bf16_between_convs(ir::Graph& g);

// Likewise for matrix products: the output Y of a FusedMatMul marked bf16 without a residual Z,
// read only as A by FusedMatMuls marked bf16 (a transformer's feed-forward pair, the GELU fused
// into the first), and neither a graph output nor read by a subgraph, becomes bfloat16: the
// producer gets bf16_output = 1, the readers bf16_input = 1. Saves the readers' per-run
// conversion and half of Y's bytes. Returns the number of values made bfloat16.
int keep_bf16_between_products(ir::Graph& g);

}  // namespace osprey::passes
