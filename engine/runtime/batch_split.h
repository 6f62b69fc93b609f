// Image-by-image runs of a batch: whether a graph's result for a batch of N is the N results of
// its items, concatenated, so that a session may run a batch one item at a time.
//
// Why: oneDNN 2.6's channels-last convolutions stream the whole batch through every layer, so a
// batch of 8 images keeps ~8x the working set of one image between layers and falls out of the
// caches: MobileNetV2 at batch 8 took ~13 ms per image where one image alone takes ~7.5 ms
// (AVX2). Run item by item, each layer's input is still in cache; with AVX-512 (Zen 5) item by
// item was 0.90-0.97x the whole batch's time as well.
#pragma once

#include <string>

#include "ir/graph.h"
#include "passes/shape_inference.h"

namespace osprey {

// Why `g` (a main graph, after the passes; `facts` its infer_shapes) is not separable along axis 0, or "" when it is:
// every non-initializer graph input is a tensor whose first dim is symbolic (the same symbol
// for all of them), every node is one whose items do not mix along axis 0 (convolutions,
// pools, element-wise ops against constants that do not broadcast along it, reductions,
// softmaxes and concatenations over other axes, Transpose keeping axis 0 first, Flatten,
// Reshape keeping dim 0, products of batched rows by constant weights), and every graph
// output carries the batch on axis 0. Nodes with subgraphs are not separable.
std::string batch_split_obstacle(const ir::Graph& g, const passes::ShapeFacts& facts);

// True when the graph has a convolution (the kind of model the split is for).
bool has_convolution(const ir::Graph& g);

// What a whole batch shares and what it keeps, from the convolutions' shapes with the batch dim
// as 1: their constant weights' bytes; per item the bytes of their inputs and outputs, summed
// and the largest single convolution's. `known` is false when some convolution's shape is not
// fixed beyond its batch dim.
struct ConvTraffic {
  double weight_bytes = 0, act_bytes = 0, max_act_bytes = 0;
  bool known = false;
};
ConvTraffic conv_traffic(const ir::Graph& g, const passes::ShapeFacts& facts);

// The largest batch that runs faster whole than item by item (0: none): the weights must be at
// least half the bytes the convolutions move per item (a whole batch reads each weight once
// instead of once per item: ResNet50, 94 MB of weights against 86 MB of activations per item),
// and twice the largest convolution's inputs and outputs over the whole batch must fit in the
// last-level cache (`llc_bytes`; 0 when unknown), so that the batch's activations stay cached
// between layers. Measured at batch 8, one core: ResNet50 whole in 0.85x the split's time on a
// Xeon with a 480 MiB L3, split in 0.93-0.97x the whole batch's on a Zen 5 with 32 MiB;
// MobileNetV2 and EfficientNet-Lite0 (weights a sixth of their activations) split faster on
// both.
int64_t whole_batch_limit(const ConvTraffic& t, int64_t llc_bytes);

}  // namespace osprey
