// DeformConv (opsets 19, 22), 2-D: a convolution whose every tap reads the input at its
// regular position plus a learned offset (offset [N, G * 2 * kH * kW, oH, oW], y then x per tap
// for each of G offset groups), bilinearly interpolated with zeros outside the image, times
// an optional mask [N, G * kH * kW, oH, oW], then the weights [M, C / group, kH, kW] and the
// optional bias. The sampled taps are gathered into columns first (double), then multiplied.
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

// Bilinear sample of one [h, w] image at (py, px); corners outside the image count as 0.
template <class T>
double sample(const T* img, int64_t h, int64_t w, double py, double px) {
  if (!(py > -1.0 && py < static_cast<double>(h) && px > -1.0 && px < static_cast<double>(w))) return 0.0;
  const double fy = std::floor(py), fx = std::floor(px);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ty = py - fy, tx = px - fx;
  auto at = [&](int64_t y, int64_t x) {
    return y >= 0 && y < h && x >= 0 && x < w ? cast_to<double>(img[y * w + x]) : 0.0;
  };
  return (1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) + ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1));
}

}  // namespace

Status deform_conv(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 64));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return invalid_argument("DeformConv: only 2-D convolution (4-D input) is supported, got rank ", x.rank());
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 2, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
  const Tensor& wt = ctx.input(1);
  const Tensor& off = ctx.input(2);
  const int64_t n = x.dim(0), c = x.dim(1), ih = x.dim(2), iw = x.dim(3);
  const int64_t m = wt.dim(0), kh = wt.dim(2), kw = wt.dim(3);
  const int64_t group = ctx.attr_int("group", 1), og = ctx.attr_int("offset_group", 1);
  if (group <= 0 || og <= 0 || c % group != 0 || m % group != 0 || wt.dim(1) * group != c || c % og != 0)
    return invalid_argument("DeformConv: X ", shape_to_string(x.shape()), ", W ", shape_to_string(wt.shape()),
                            ", group ", group, " and offset_group ", og, " do not fit");
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != std::vector<int64_t>{kh, kw})
    return invalid_argument("kernel_shape differs from W's spatial shape");
  auto ints = [&](const char* name, int64_t def, size_t count) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> v = ctx.has_attr(name) ? ctx.attr_ints(name) : std::vector<int64_t>(count, def);
    if (v.size() != count) return invalid_argument(name, " must have ", count, " values, got ", v.size());
    return v;
  };
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> dil, ints("dilations", 1, 2));
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints("pads", 0, 4));
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> str, ints("strides", 1, 2));
  if (dil[0] <= 0 || dil[1] <= 0 || str[0] <= 0 || str[1] <= 0)
    return invalid_argument("dilations and strides must be positive");
  constexpr int64_t kBig = int64_t{1} << 40;  // keeps the arithmetic below in range
  for (int64_t v : {dil[0], dil[1], str[0], str[1], pads[0], pads[1], pads[2], pads[3]})
    if (v < 0 || v > kBig) return invalid_argument("pads must be >= 0, and pads, dilations and strides not too large");
  const int64_t oh = (ih + pads[0] + pads[2] - (dil[0] * (kh - 1) + 1)) / str[0] + 1;
  const int64_t ow = (iw + pads[1] + pads[3] - (dil[1] * (kw - 1) + 1)) / str[1] + 1;
  const int64_t taps = kh * kw;
  if (off.dim(0) != n || off.dim(1) != og * 2 * taps || off.dim(2) != oh || off.dim(3) != ow)
    return invalid_argument("offset has shape ", shape_to_string(off.shape()), ", expected [", n, ", ", og * 2 * taps,
                            ", ", oh, ", ", ow, "]");
  const bool has_bias = ctx.has_input(3), has_mask = ctx.has_input(4);
  if (has_bias && (ctx.input(3).dtype() != x.dtype() || ctx.input(3).numel() != m))
    return invalid_argument("B must hold ", m, " values of X's type");
  if (has_mask) {
    const Tensor& mk = ctx.input(4);
    if (mk.dtype() != x.dtype() || mk.rank() != 4 || mk.dim(0) != n || mk.dim(1) != og * taps || mk.dim(2) != oh ||
        mk.dim(3) != ow)
      return invalid_argument("mask has shape ", shape_to_string(mk.shape()), ", expected [", n, ", ", og * taps, ", ",
                              oh, ", ", ow, "] of X's type");
  }
  if (oh <= 0 || ow <= 0) return invalid_argument("the kernel does not fit the padded input");
  const int64_t cols = c * taps * oh * ow;
  if (cols > ctx.max_elements()) return resource_exhausted("DeformConv: ", cols, " sampled values exceed the element limit");
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), {n, m, oh, ow}));
  return dispatch<FloatTypes>(x.dtype(), "DeformConv", [&]<class T>() {
    const T* xp = x.data<T>();
    const T* wp = wt.data<T>();
    const T* op = off.data<T>();
    const T* mp = has_mask ? ctx.input(4).data<T>() : nullptr;
    const T* bp = has_bias ? ctx.input(3).data<T>() : nullptr;
    T* yp = y.data<T>();
    const int64_t cpo = c / og, cpg = c / group, mpg = m / group, plane = oh * ow;
    std::vector<double> col(static_cast<size_t>(cols));  // [c][tap][oh * ow]
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t g = ch / cpo;
        const T* img = xp + (b * c + ch) * ih * iw;
        for (int64_t t = 0; t < taps; ++t) {
          const T* dy = op + ((b * og + g) * 2 * taps + 2 * t) * plane;
          const T* dx = dy + plane;
          const T* mk = mp ? mp + ((b * og + g) * taps + t) * plane : nullptr;
          double* dst = col.data() + (ch * taps + t) * plane;
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              const int64_t q = i * ow + j;
              const double py = static_cast<double>(i * str[0] - pads[0] + (t / kw) * dil[0]) + cast_to<double>(dy[q]);
              const double px = static_cast<double>(j * str[1] - pads[1] + (t % kw) * dil[1]) + cast_to<double>(dx[q]);
              dst[q] = sample(img, ih, iw, py, px) * (mk ? cast_to<double>(mk[q]) : 1.0);
            }
        }
      }
      for (int64_t o = 0; o < m; ++o) {
        const int64_t g = o / mpg;
        for (int64_t q = 0; q < plane; ++q) {
          double acc = bp ? cast_to<double>(bp[o]) : 0.0;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t t = 0; t < taps; ++t)
              acc += cast_to<double>(wp[(o * cpg + ci) * taps + t]) * col[static_cast<size_t>(((g * cpg + ci) * taps + t) * plane + q)];
          yp[(b * m + o) * plane + q] = cast_to<T>(acc);
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
