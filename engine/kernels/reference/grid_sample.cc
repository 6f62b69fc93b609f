// GridSample (opsets 16, 20): samples an [N, C, D1..Dr] input at the normalized positions of
// an [N, O1..Or, r] grid with (multi)linear, nearest or bicubic interpolation.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

enum class GsMode { kBilinear, kNearest, kBicubic };
enum class GsPad { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] (repeatedly, like a mirror).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double d = lo - x;
    const double n = std::floor(d / range);
    const double r = d - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi;
    const double n = std::floor(d / range);
    const double r = d - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

// The spatial dims of one image (D1..Dr), the padding rule and the valid coordinate range.
struct Sampler {
  GsPad pad;
  std::vector<int64_t> dims, strides;
  std::vector<double> lo, hi;  // per dim, the valid coordinate range (for reflection)

  // Value at integer position `at` (one index per spatial dim), with the padding rule for
  // positions outside.
  template <class C, class T>
  C pixel(const T* img, const int64_t* at) const {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t i = at[d];
      if (pad == GsPad::kZeros) {
        if (i < 0 || i >= dims[d]) return C(0);
      } else {
        if (pad == GsPad::kReflection) i = static_cast<int64_t>(reflect(static_cast<double>(i), lo[d], hi[d]));
        i = std::clamp<int64_t>(i, 0, dims[d] - 1);
      }
      off += i * strides[d];
    }
    return static_cast<C>(static_cast<compute_t<T>>(img[off]));
  }

  // Multilinear interpolation from dim d on: the lower neighbour's value then the upper's,
  // mixed by the fraction of dim d (the outermost dim last, as the 2-D formula nests).
  template <class C, class T>
  C linear(const T* img, const std::vector<double>& p, std::vector<int64_t>& at, size_t d) const {
    if (d == dims.size()) return pixel<C>(img, at.data());
    const double f = std::floor(p[d]);
    const double t = p[d] - f;
    at[d] = static_cast<int64_t>(f);
    const C a = linear<C>(img, p, at, d + 1);
    at[d] = static_cast<int64_t>(f) + 1;
    const C b = linear<C>(img, p, at, d + 1);
    return (1 - t) * a + t * b;
  }
};

void cubic_coeffs(double t, double c[4]) {
  constexpr double a = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

// x: [N, C, D1..Dr]; grid: [N, O1..Or, r] whose last axis lists the coordinates innermost dim
// first (x, y, z); y: [N, C, O1..Or].
template <class T>
void grid_sample_impl(const Tensor& x, const Tensor& grid, Tensor& y, GsMode mode, GsPad pad,
                      bool align) {
  using C = double;
  const size_t r = static_cast<size_t>(x.rank() - 2);
  const int64_t n = x.dim(0), ch = x.dim(1);
  Sampler s{pad, {}, {}, {}, {}};
  int64_t image = 1, points = 1, largest = 1;
  for (size_t d = 0; d < r; ++d) {
    const int64_t len = x.dim(static_cast<int64_t>(d) + 2);
    s.dims.push_back(len);
    s.lo.push_back(align ? 0.0 : -0.5);
    s.hi.push_back(align ? static_cast<double>(len - 1) : static_cast<double>(len) - 0.5);
    image *= len;
    largest = std::max(largest, len);
    points *= grid.dim(static_cast<int64_t>(d) + 1);
  }
  s.strides.assign(r, 1);
  for (size_t d = r; d-- > 1;) s.strides[d - 1] = s.strides[d] * s.dims[d];
  const T* in = x.data<T>();
  const T* g = grid.data<T>();
  T* out = y.data<T>();
  std::vector<double> p(r);
  std::vector<int64_t> at(r);
  const double lim = 4.0 + static_cast<double>(largest) * 4.0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < points; ++i) {
      const T* gp = g + (b * points + i) * static_cast<int64_t>(r);
      bool finite = true;
      for (size_t d = 0; d < r; ++d) {
        // Denormalize [-1, 1] to a position along dim d (grid component r - 1 - d).
        const double gv = static_cast<double>(static_cast<compute_t<T>>(gp[r - 1 - d]));
        const double len = static_cast<double>(s.dims[d]);
        double v = align ? (gv + 1) / 2 * (len - 1) : ((gv + 1) * len - 1) / 2;
        if (!std::isfinite(v)) finite = false;
        // Keep coordinates in a range that converts safely to integers.
        v = std::clamp(v, -lim, lim);
        if (mode == GsMode::kNearest) v = std::nearbyint(v);
        if (v < s.lo[d] || v > s.hi[d]) {
          if (pad == GsPad::kBorder)
            v = std::clamp(v, 0.0, len - 1);
          else if (pad == GsPad::kReflection)
            v = reflect(v, s.lo[d], s.hi[d]);
        }
        p[d] = v;
      }
      if (!finite) {
        for (int64_t c = 0; c < ch; ++c) out[(b * ch + c) * points + i] = T(0);
        continue;
      }
      for (int64_t c = 0; c < ch; ++c) {
        const T* img = in + (b * ch + c) * image;
        C v = 0;
        if (mode == GsMode::kNearest) {
          for (size_t d = 0; d < r; ++d) at[d] = static_cast<int64_t>(p[d]);
          v = s.pixel<C>(img, at.data());
        } else if (mode == GsMode::kBilinear) {
          v = s.linear<C>(img, p, at, 0);
        } else {  // bicubic: 2-D only
          const double fx = std::floor(p[1]), fy = std::floor(p[0]);
          const int64_t x0 = static_cast<int64_t>(fx) - 1, y0 = static_cast<int64_t>(fy) - 1;
          double cx[4], cy[4];
          cubic_coeffs(p[1] - fx, cx);
          cubic_coeffs(p[0] - fy, cy);
          for (int64_t rr = 0; rr < 4; ++rr) {
            C row = 0;
            for (int64_t k = 0; k < 4; ++k) {
              const int64_t pos[2] = {y0 + rr, x0 + k};
              row += cx[k] * s.pixel<C>(img, pos);
            }
            v += cy[rr] * row;
          }
        }
        out[(b * ch + c) * points + i] = cast_to<T>(v);
      }
    }
  }
}

}  // namespace

// GridSample: opset 16 takes 4-D input and modes bilinear, nearest, bicubic; opset 20 takes
// N-D input ([N, C, D1..Dr], r >= 1) and names the modes linear, nearest, cubic (cubic 2-D only).
Status grid_sample(KernelContext& ctx) {
  const bool nd = ctx.opset() >= 20;
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, nd ? 3 : 4, nd ? 64 : 4));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const int64_t r = x.rank() - 2;
  bool grid_ok = grid.rank() == x.rank() && grid.dim(0) == x.dim(0) && grid.dim(r + 1) == r;
  if (!grid_ok)
    return invalid_argument("grid must have shape [N, ", r == 2 ? "H_out, W_out" : "D1_out..Dr_out", ", ", r,
                            "] with N = ", x.dim(0), ", got ", shape_to_string(grid.shape()));
  const std::string mode_s = ctx.attr_string("mode", nd ? "linear" : "bilinear");
  GsMode mode;
  if (mode_s == (nd ? "linear" : "bilinear"))
    mode = GsMode::kBilinear;
  else if (mode_s == "nearest")
    mode = GsMode::kNearest;
  else if (mode_s == (nd ? "cubic" : "bicubic"))
    mode = GsMode::kBicubic;
  else
    return invalid_argument("unsupported mode '", mode_s, "' at opset ", ctx.opset());
  if (mode == GsMode::kBicubic && r != 2)
    return invalid_argument("mode '", mode_s, "' needs a 4-D input, got rank ", x.rank());
  const std::string pad_s = ctx.attr_string("padding_mode", "zeros");
  GsPad pad;
  if (pad_s == "zeros")
    pad = GsPad::kZeros;
  else if (pad_s == "border")
    pad = GsPad::kBorder;
  else if (pad_s == "reflection")
    pad = GsPad::kReflection;
  else
    return invalid_argument("unsupported padding_mode '", pad_s, "'");
  const int64_t align = ctx.attr_int("align_corners", 0);
  if (align != 0 && align != 1) return invalid_argument("align_corners must be 0 or 1");
  Shape os{x.dim(0), x.dim(1)};
  bool empty_image = false;
  for (int64_t d = 0; d < r; ++d) {
    os.push_back(grid.dim(d + 1));
    if (x.dim(d + 2) == 0) empty_image = true;
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), os));
  if (y.numel() == 0) return Status::Ok();
  if (empty_image) {
    if (pad != GsPad::kZeros)
      return invalid_argument("cannot sample an empty image with padding_mode '", pad_s, "'");
    return Status::Ok();  // every sample falls outside: zeros
  }
  return dispatch<FloatTypes>(x.dtype(), "GridSample", [&]<class T>() {
    grid_sample_impl<T>(x, grid, y, mode, pad, align == 1);
    return Status::Ok();
  });
}

}  // namespace osprey::ref
