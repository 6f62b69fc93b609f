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

namespace osprey {

// Why `g` (a main graph, after the passes) is not separable along axis 0, or "" when it is:
// every non-initializer graph input is a tensor whose first dim is symbolic (the same symbol
// for all of them), every node is one whose items do not mix along axis 0 (convolutions,
// pools, element-wise ops against constants that do not broadcast along it, reductions,
// softmaxes and concatenations over other axes, Transpose keeping axis 0 first, Flatten,
// Reshape keeping dim 0, products of batched rows by constant weights), and every graph
// output carries the batch on axis 0. Nodes with subgraphs are not separable.
std::string batch_split_obstacle(const ir::Graph& g);

// True when the graph has a convolution (the kind of model the split is for).
bool has_convolution(const ir::Graph& g);

}  // namespace osprey
