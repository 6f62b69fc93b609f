// Resize and Upsample in linear mode over float32 when only the last two axes change (the
// bilinear upsampling of a segmentation head or an FPN, any coordinate transformation mode):
// the reference's taps (ref::resize_plan), interpolated output row by output row with the
// two horizontally interpolated input rows it needs kept and reused by the next output rows,
// rows across the threads. The reference resizes the whole tensor one axis at a time through
// float buffers (1.2-2.4x onnxruntime's time on [1, 64, 80, 80] x2). The arithmetic is the
// reference's, in its order (0 + w0 a + w1 b along the rows, then w0 r0 (+ w1 r1 where w1 is
// not 0) down the columns; this file is built without fused multiply-adds), so the results
// are its bits. Nearest and cubic modes, the tf_crop_and_resize box, other axes and other
// types run the reference, the oracle of the tests.
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/resize_plan.h"

namespace osprey::cpu {
namespace {

// One axis's taps as floats (the reference converts its double weights the same way).
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

Taps float_taps(const ref::ResizeAxis& a) {
  Taps t;
  const size_t n = a.idx.size() / 2;
  for (size_t j = 0; j < n; ++j) {
    t.i0.push_back(a.idx[2 * j]);
    t.i1.push_back(a.idx[2 * j + 1]);
    t.w0.push_back(static_cast<float>(a.w[2 * j]));
    t.w1.push_back(static_cast<float>(a.w[2 * j + 1]));
  }
  return t;
}

// True when the plan is linear, every axis before the last two is the identity and no output
// index falls outside (tf_crop_and_resize's box).
bool planar_linear(const ref::ResizePlan& plan) {
  const size_t rank = plan.axes.size();
  if (!plan.linear || rank < 2) return false;
  for (size_t a = 0; a + 2 < rank; ++a)
    if (!plan.axes[a].identity) return false;
  for (size_t a = rank - 2; a < rank; ++a)
    for (uint8_t o : plan.axes[a].outside)
      if (o) return false;
  return true;
}

Status run(KernelContext& ctx, bool upsample, Status (*reference)(KernelContext&)) {
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kFloat32 ||
      (mode != "linear" && mode != "bilinear"))
    return reference(ctx);  // without building the taps twice
  ref::ResizePlan plan;
  if (!ref::resize_plan(ctx, upsample, &plan).ok() || !planar_linear(plan)) return reference(ctx);
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const int64_t ih = x.dim(rank - 2), iw = x.dim(rank - 1);
  const int64_t oh = plan.out_shape[static_cast<size_t>(rank - 2)], ow = plan.out_shape[static_cast<size_t>(rank - 1)];
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, plan.out_shape));
  if (y.numel() == 0) return Status::Ok();
  const ref::ResizeAxis& ah = plan.axes[static_cast<size_t>(rank - 2)];
  const ref::ResizeAxis& aw = plan.axes[static_cast<size_t>(rank - 1)];
  const Taps th = float_taps(ah), tw = float_taps(aw);
  const int64_t planes = y.numel() / (oh * ow);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  ctx.parallel_for(planes * oh, ow * 8, [&](int64_t u0, int64_t u1) {
    // Input rows interpolated along the last axis: two buffers, each remembering its row.
    std::vector<float> buf[2] = {std::vector<float>(static_cast<size_t>(ow)), std::vector<float>(static_cast<size_t>(ow))};
    int64_t held[2] = {-1, -1};  // plane * ih + input row, or -1
    int next = 0;
    auto row = [&](int64_t plane, int64_t r) -> const float* {
      const float* src = xp + (plane * ih + r) * iw;
      if (aw.identity) return src;
      const int64_t key = plane * ih + r;
      for (int b = 0; b < 2; ++b)
        if (held[b] == key) return buf[b].data();
      float* d = buf[next].data();
      for (int64_t j = 0; j < ow; ++j) {
        const size_t ju = static_cast<size_t>(j);
        float acc = 0;
        acc += tw.w0[ju] * src[tw.i0[ju]];
        acc += tw.w1[ju] * src[tw.i1[ju]];
        d[j] = acc;
      }
      held[next] = key;
      next ^= 1;
      return d;
    };
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t plane = u / oh, r = u % oh;
      float* d = yp + u * ow;
      if (ah.identity) {
        const float* s = row(plane, r);
        if (s != d) std::copy(s, s + ow, d);
        continue;
      }
      const size_t ru = static_cast<size_t>(r);
      const float* s0 = row(plane, th.i0[ru]);
      const float w0 = th.w0[ru], w1 = th.w1[ru];
      for (int64_t i = 0; i < ow; ++i) d[i] = w0 * s0[i];
      if (w1 != 0.0f) {
        const float* s1 = row(plane, th.i1[ru]);  // s0 is read no more: its buffer may go
        for (int64_t i = 0; i < ow; ++i) d[i] += w1 * s1[i];
      }
    }
  });
  return Status::Ok();
}

}  // namespace

Status resize(KernelContext& ctx) { return run(ctx, false, &ref::resize); }
Status upsample(KernelContext& ctx) { return run(ctx, true, &ref::upsample); }

}  // namespace osprey::cpu
