// Resize and Upsample with interpolation (linear, cubic, antialiased) over float32 when only
// the last two axes change (the bilinear upsampling of a segmentation head or an FPN, the
// antialiased downscaling of a pre-processing graph; any coordinate transformation mode): the
// reference's taps (ref::resize_plan), interpolated output row by output row, the horizontally
// interpolated input rows it needs kept (as many as an output row has taps) and reused by the
// next output rows, rows across the threads. The reference resizes the whole tensor one axis
// at a time through float buffers (1.2-2.4x onnxruntime's time on [1, 64, 80, 80] x2, 2x on an
// antialiased halving). The arithmetic is the reference's, in its order (0 + w0 a + w1 b + ...
// along the rows, then w0 r0 (+ wk rk for each later tap whose wk is not 0) down the columns;
// this file is built without fused multiply-adds), so the results are its bits. Nearest mode,
// the tf_crop_and_resize box, other axes and other types run the reference, the oracle of the
// tests.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/resize_plan.h"

namespace osprey::cpu {
namespace {

// One axis's taps with float weights (the reference converts its double weights the same way):
// output index j reads idx[j * n + k] with weight w[j * n + k], k < n.
struct Taps {
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<float> w;
};

Taps float_taps(const ref::ResizeAxis& a) {
  Taps t;
  t.n = a.taps;
  t.idx = a.idx;
  for (double v : a.w) t.w.push_back(static_cast<float>(v));
  return t;
}

// True when the plan interpolates, every axis before the last two is the identity and no
// output index falls outside (tf_crop_and_resize's box).
bool planar(const ref::ResizePlan& plan) {
  const size_t rank = plan.axes.size();
  if (!plan.interpolated || rank < 2) return false;
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
      (mode != "linear" && mode != "bilinear" && mode != "cubic"))
    return reference(ctx);  // without building the taps twice
  ref::ResizePlan plan;
  if (!ref::resize_plan(ctx, upsample, &plan).ok() || !planar(plan)) return reference(ctx);
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
  const size_t kept = static_cast<size_t>(std::max<int64_t>(th.n, 1));
  ctx.parallel_for(planes * oh, ow * 4 * (th.n + tw.n), [&](int64_t u0, int64_t u1) {
    // Input rows interpolated along the last axis, each buffer remembering its row; replaced
    // round robin.
    std::vector<std::vector<float>> buf(kept, std::vector<float>(static_cast<size_t>(ow)));
    std::vector<int64_t> held(kept, -1);  // plane * ih + input row, or -1
    size_t next = 0;
    auto row = [&](int64_t plane, int64_t r) -> const float* {
      const float* src = xp + (plane * ih + r) * iw;
      if (aw.identity) return src;
      const int64_t key = plane * ih + r;
      for (size_t b = 0; b < kept; ++b)
        if (held[b] == key) return buf[b].data();
      float* d = buf[next].data();
      const int64_t n = tw.n;
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t* ix = tw.idx.data() + j * n;
        const float* w = tw.w.data() + j * n;
        float acc = 0;
        for (int64_t k = 0; k < n; ++k) acc += w[k] * src[ix[k]];
        d[j] = acc;
      }
      held[next] = key;
      next = (next + 1) % kept;
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
      const int64_t* ix = th.idx.data() + r * th.n;
      const float* w = th.w.data() + r * th.n;
      const float* s0 = row(plane, ix[0]);
      const float w0 = w[0];
      for (int64_t i = 0; i < ow; ++i) d[i] = w0 * s0[i];
      for (int64_t k = 1; k < th.n; ++k) {
        const float wk = w[k];
        if (wk == 0.0f) continue;
        const float* sk = row(plane, ix[k]);  // the earlier rows are read no more: their buffers may go
        for (int64_t i = 0; i < ow; ++i) d[i] += wk * sk[i];
      }
    }
  });
  return Status::Ok();
}

}  // namespace

Status resize(KernelContext& ctx) { return run(ctx, false, &ref::resize); }
Status upsample(KernelContext& ctx) { return run(ctx, true, &ref::upsample); }

}  // namespace osprey::cpu
