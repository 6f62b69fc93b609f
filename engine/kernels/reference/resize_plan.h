// The reference Resize's (and Upsample's) reading of a node: per axis, the input taps (index,
// weight) of each output index, as resize.cc computes them. The fast CPU kernel (cpu/resize_cpu.cc)
// takes the plan and interpolates the same taps in its own loops.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace osprey::ref {

// One axis: for each output index, `taps` input indices and weights, or "outside" (the
// tf_crop_and_resize box); identity when every output index maps onto its own input index.
struct ResizeAxis {
  int taps = 1;
  bool identity = true;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<uint8_t> outside;
};

struct ResizePlan {
  bool interpolated = false;  // linear or cubic: the taps weighted and summed (else nearest)
  Shape out_shape;
  std::vector<ResizeAxis> axes;
};

// Reads a Resize (or, with `upsample`, an Upsample) node's attributes and inputs as the
// reference does, with its errors, and builds the taps of every axis.
Status resize_plan(KernelContext& ctx, bool upsample, ResizePlan* plan);

Status resize(KernelContext& ctx);    // the reference kernels
Status upsample(KernelContext& ctx);

}  // namespace osprey::ref
