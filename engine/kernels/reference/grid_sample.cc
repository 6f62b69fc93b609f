// GridSample (opset 16): samples a 4-D NCHW input at the normalized (x, y) positions of
// a [N, H_out, W_out, 2] grid with bilinear, nearest or bicubic interpolation.
#include <algorithm>
#include <cmath>
#include <string>

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

struct Sampler {
  GsPad pad;
  int64_t h, w;
  double x_min, x_max, y_min, y_max;  // the valid coordinate range (for reflection)

  // Value of pixel (r, c) of one channel image, with the padding rule for outside pixels.
  template <class C, class T>
  C pixel(const T* img, int64_t r, int64_t c) const {
    if (pad == GsPad::kZeros) {
      if (r < 0 || r >= h || c < 0 || c >= w) return C(0);
    } else if (pad == GsPad::kBorder) {
      r = std::clamp<int64_t>(r, 0, h - 1);
      c = std::clamp<int64_t>(c, 0, w - 1);
    } else {
      c = static_cast<int64_t>(reflect(static_cast<double>(c), x_min, x_max));
      r = static_cast<int64_t>(reflect(static_cast<double>(r), y_min, y_max));
      r = std::clamp<int64_t>(r, 0, h - 1);
      c = std::clamp<int64_t>(c, 0, w - 1);
    }
    return static_cast<C>(static_cast<compute_t<T>>(img[r * w + c]));
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

template <class T>
void grid_sample_impl(const Tensor& x, const Tensor& grid, Tensor& y, GsMode mode, GsPad pad,
                      bool align) {
  using C = double;
  const int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  Sampler s{pad, h, w, 0, 0, 0, 0};
  if (align) {
    s.x_min = 0, s.x_max = static_cast<double>(w - 1), s.y_min = 0,
    s.y_max = static_cast<double>(h - 1);
  } else {
    s.x_min = -0.5, s.x_max = static_cast<double>(w) - 0.5, s.y_min = -0.5,
    s.y_max = static_cast<double>(h) - 0.5;
  }
  const T* in = x.data<T>();
  const T* g = grid.data<T>();
  T* out = y.data<T>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < ho * wo; ++i) {
      const T* gp = g + (b * ho * wo + i) * 2;
      const double gx = static_cast<double>(static_cast<compute_t<T>>(gp[0]));
      const double gy = static_cast<double>(static_cast<compute_t<T>>(gp[1]));
      // Denormalize [-1, 1] to pixel coordinates.
      double px = align ? (gx + 1) / 2 * static_cast<double>(w - 1)
                        : ((gx + 1) * static_cast<double>(w) - 1) / 2;
      double py = align ? (gy + 1) / 2 * static_cast<double>(h - 1)
                        : ((gy + 1) * static_cast<double>(h) - 1) / 2;
      if (!std::isfinite(px) || !std::isfinite(py)) {
        for (int64_t c = 0; c < ch; ++c) out[((b * ch + c) * ho * wo) + i] = T(0);
        continue;
      }
      // Keep coordinates in a range that converts safely to integers.
      const double lim = 4.0 + static_cast<double>(std::max(h, w)) * 4.0;
      px = std::clamp(px, -lim, lim);
      py = std::clamp(py, -lim, lim);
      if (mode == GsMode::kNearest) {
        px = std::nearbyint(px);
        py = std::nearbyint(py);
      }
      if (px < s.x_min || px > s.x_max || py < s.y_min || py > s.y_max) {
        if (pad == GsPad::kBorder) {
          px = std::clamp(px, 0.0, static_cast<double>(w - 1));
          py = std::clamp(py, 0.0, static_cast<double>(h - 1));
        } else if (pad == GsPad::kReflection) {
          px = reflect(px, s.x_min, s.x_max);
          py = reflect(py, s.y_min, s.y_max);
        }
      }
      for (int64_t c = 0; c < ch; ++c) {
        const T* img = in + (b * ch + c) * h * w;
        C v = 0;
        if (mode == GsMode::kNearest) {
          v = s.pixel<C>(img, static_cast<int64_t>(py), static_cast<int64_t>(px));
        } else if (mode == GsMode::kBilinear) {
          const double fx = std::floor(px), fy = std::floor(py);
          const int64_t x1 = static_cast<int64_t>(fx), y1 = static_cast<int64_t>(fy);
          const double dx = px - fx, dy = py - fy;
          const C p11 = s.pixel<C>(img, y1, x1), p12 = s.pixel<C>(img, y1, x1 + 1);
          const C p21 = s.pixel<C>(img, y1 + 1, x1), p22 = s.pixel<C>(img, y1 + 1, x1 + 1);
          v = (1 - dy) * ((1 - dx) * p11 + dx * p12) + dy * ((1 - dx) * p21 + dx * p22);
        } else {
          const double fx = std::floor(px), fy = std::floor(py);
          const int64_t x0 = static_cast<int64_t>(fx) - 1, y0 = static_cast<int64_t>(fy) - 1;
          double cx[4], cy[4];
          cubic_coeffs(px - fx, cx);
          cubic_coeffs(py - fy, cy);
          for (int64_t r = 0; r < 4; ++r) {
            C row = 0;
            for (int64_t k = 0; k < 4; ++k) row += cx[k] * s.pixel<C>(img, y0 + r, x0 + k);
            v += cy[r] * row;
          }
        }
        out[((b * ch + c) * ho * wo) + i] = cast_to<T>(v);
      }
    }
  }
}

}  // namespace

Status grid_sample(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (grid.dim(0) != x.dim(0) || grid.dim(3) != 2)
    return invalid_argument("grid must have shape [N, H_out, W_out, 2] with N = ", x.dim(0),
                            ", got ", shape_to_string(grid.shape()));
  const std::string mode_s = ctx.attr_string("mode", "bilinear");
  GsMode mode;
  if (mode_s == "bilinear")
    mode = GsMode::kBilinear;
  else if (mode_s == "nearest")
    mode = GsMode::kNearest;
  else if (mode_s == "bicubic")
    mode = GsMode::kBicubic;
  else
    return invalid_argument("unsupported mode '", mode_s, "'");
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
  OSPREY_ASSIGN_OR_RETURN(
      Tensor y, ctx.new_output(0, x.dtype(), {x.dim(0), x.dim(1), grid.dim(1), grid.dim(2)}));
  if (y.numel() == 0) return Status::Ok();
  if (x.dim(2) == 0 || x.dim(3) == 0) {
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
