// Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7, 9).
//
// Every axis gets its own 1-D mapping from output index to input taps (index, weight),
// computed from the coordinate transformation mode. Nearest mode is a gather (exact for
// every element type). Linear and cubic interpolation are separable: the tensor is resized
// one axis at a time, last axis first, in a float (or double) buffer. This is the same as
// the ONNX reference, which interpolates the innermost axis first and combines outward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/resize_plan.h"

namespace osprey::ref {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Ctm {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
  kHalfPixelSymmetric  // opset 19
};
// kSimple: Resize-10/Upsample behaviour (floor when upsampling, ceil when downsampling).
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  Ctm ctm = Ctm::kAsymmetric;
  NearestMode nearest = NearestMode::kSimple;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;  // opset 18: linear and cubic widen their filter when downsampling
  double extrapolation = 0.0;
  std::vector<double> scales;       // per axis
  std::vector<double> len_resized;  // per axis: output length as a real number (in * scale)
  Shape out_shape;
  std::vector<double> roi;  // 2*rank: starts then ends (tf_crop_and_resize only)
};

using AxisMap = ResizeAxis;

double original_coordinate(const ResizeParams& p, size_t axis, int64_t x, int64_t in_len) {
  const double scale = p.scales[axis];
  const double len_out = p.len_resized[axis];
  const double xr = static_cast<double>(x);
  switch (p.ctm) {
    case Ctm::kHalfPixel:
      return (xr + 0.5) / scale - 0.5;
    case Ctm::kHalfPixelSymmetric: {
      // The centre of the input maps onto the centre of the output canvas: differs from
      // half_pixel only when the output length is not in * scale.
      const double adjustment = static_cast<double>(p.out_shape[axis]) / len_out;
      const double offset = 0.5 * static_cast<double>(in_len) * (1 - adjustment);
      return offset + (xr + 0.5) / scale - 0.5;
    }
    case Ctm::kPytorchHalfPixel:
      return len_out > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
    case Ctm::kAlignCorners:
      return len_out == 1 ? 0.0 : xr * static_cast<double>(in_len - 1) / (len_out - 1);
    case Ctm::kAsymmetric:
      return xr / scale;
    case Ctm::kTfHalfPixelForNn:
      return (xr + 0.5) / scale;
    case Ctm::kTfCropAndResize: {
      const double start = p.roi[axis], end = p.roi[axis + p.scales.size()];
      const double span = static_cast<double>(in_len - 1);
      if (len_out == 1) return 0.5 * (start + end) * span;
      return start * span + xr * (end - start) * span / (len_out - 1);
    }
  }
  return 0.0;
}

void cubic_coeffs(double r, double a, double c[4]) {
  const double x0 = r + 1, x1 = r, x2 = 1 - r, x3 = 2 - r;
  c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

// Antialiased linear or cubic taps of an axis that shrinks (scale < 1), as the ONNX
// reference computes them: the filter is stretched by 1 / scale, so each output index reads
// 2 - 2 * start inputs around its source coordinate (start = floor(-support / scale) + 1),
// weighted by the filter at scale * distance and normalized to sum 1.
AxisMap antialias_axis_map(const ResizeParams& p, size_t axis, int64_t in_len) {
  AxisMap m;
  m.identity = false;
  // An empty output needs no taps; any other has scale >= 1 / in_len, so the count below
  // (about 2 / scale, 4 / scale for cubic) stays within a few times the input's length.
  if (p.out_shape[axis] == 0 || in_len == 0) return m;
  const double s = std::max(p.scales[axis], 1.0 / static_cast<double>(in_len));
  const bool cubic = p.mode == Mode::kCubic;
  const int64_t start = static_cast<int64_t>(std::floor((cubic ? -2.0 : -1.0) / s)) + 1;
  const int64_t n = 2 - 2 * start;
  const int64_t out_len = p.out_shape[axis];
  m.taps = static_cast<int>(n);
  m.identity = false;
  const size_t taps = static_cast<size_t>(n);
  m.idx.assign(static_cast<size_t>(out_len) * taps, 0);
  m.w.assign(static_cast<size_t>(out_len) * taps, 0.0);
  m.outside.assign(static_cast<size_t>(out_len), 0);
  const double a = p.cubic_a;
  auto filter = [&](double d) {
    d = std::fabs(d);
    if (!cubic) return std::clamp(1 - d, 0.0, 1.0);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  const int64_t last = std::max<int64_t>(in_len - 1, 0);
  std::vector<double> c(taps);
  for (int64_t x = 0; x < out_len; ++x) {
    const double xo = original_coordinate(p, axis, x, in_len);
    const size_t base = static_cast<size_t>(x) * taps;
    if (p.ctm == Ctm::kTfCropAndResize && !(xo >= 0 && xo <= static_cast<double>(in_len - 1))) {
      m.outside[static_cast<size_t>(x)] = 1;
      continue;
    }
    const double xc =
        std::isnan(xo) ? 0.0 : std::clamp(xo, -4.0, static_cast<double>(in_len) + 4.0);
    const double left = std::ceil(xc) - 1;  // the input index left of xc (ratio in (0, 1])
    const double ratio = xc - left;
    const int64_t first = static_cast<int64_t>(left) + start;
    double sum = 0;
    for (size_t k = 0; k < taps; ++k) {
      c[k] = filter(s * (static_cast<double>(start + static_cast<int64_t>(k)) - ratio));
      const int64_t i = first + static_cast<int64_t>(k);
      if (p.exclude_outside && (i < 0 || i >= in_len)) c[k] = 0;
      sum += c[k];
    }
    for (size_t k = 0; k < taps; ++k) {
      m.idx[base + k] = std::clamp<int64_t>(first + static_cast<int64_t>(k), 0, last);
      m.w[base + k] = sum != 0 ? c[k] / sum : 0.0;
    }
  }
  return m;
}

AxisMap build_axis_map(const ResizeParams& p, size_t axis, int64_t in_len) {
  if (p.antialias && p.mode != Mode::kNearest && p.scales[axis] < 1)
    return antialias_axis_map(p, axis, in_len);
  AxisMap m;
  const int64_t out_len = p.out_shape[axis];
  m.taps = p.mode == Mode::kNearest ? 1 : p.mode == Mode::kLinear ? 2 : 4;
  const size_t taps = static_cast<size_t>(m.taps);
  m.idx.assign(static_cast<size_t>(out_len) * taps, 0);
  m.w.assign(static_cast<size_t>(out_len) * taps, 0.0);
  m.outside.assign(static_cast<size_t>(out_len), 0);
  m.identity = out_len == in_len;
  const int64_t last = std::max<int64_t>(in_len - 1, 0);
  for (int64_t x = 0; x < out_len; ++x) {
    const double xo = original_coordinate(p, axis, x, in_len);
    const size_t base = static_cast<size_t>(x) * taps;
    if (xo != static_cast<double>(x)) m.identity = false;
    if (p.ctm == Ctm::kTfCropAndResize && !(xo >= 0 && xo <= static_cast<double>(in_len - 1))) {
      m.outside[static_cast<size_t>(x)] = 1;
      m.identity = false;
      continue;
    }
    // Keep coordinates finite and within a sane range before converting to integers.
    const double xc =
        std::isnan(xo) ? 0.0 : std::clamp(xo, -4.0, static_cast<double>(in_len) + 4.0);
    const double fl = std::floor(xc);
    const double r = xc - fl;
    const int64_t x0 = static_cast<int64_t>(fl);
    if (p.mode == Mode::kNearest) {
      int64_t i = x0;
      if (r != 0) {
        switch (p.nearest) {
          case NearestMode::kRoundPreferFloor:
            i = r <= 0.5 ? x0 : x0 + 1;
            break;
          case NearestMode::kRoundPreferCeil:
            i = r < 0.5 ? x0 : x0 + 1;
            break;
          case NearestMode::kFloor:
            i = x0;
            break;
          case NearestMode::kCeil:
            i = x0 + 1;
            break;
          case NearestMode::kSimple:
            i = p.scales[axis] < 1 ? x0 + 1 : x0;
            break;
        }
      }
      m.idx[base] = std::clamp<int64_t>(i, 0, last);
      m.w[base] = 1.0;
      continue;
    }
    double c[4];
    int64_t first;
    if (p.mode == Mode::kLinear) {
      c[0] = 1 - r;
      c[1] = r;
      first = x0;
    } else {
      cubic_coeffs(r, p.cubic_a, c);
      first = x0 - 1;
    }
    if (p.exclude_outside) {
      double sum = 0;
      for (size_t k = 0; k < taps; ++k) {
        const int64_t i = first + static_cast<int64_t>(k);
        if (i < 0 || i >= in_len) c[k] = 0;
        sum += c[k];
      }
      if (sum != 0)
        for (size_t k = 0; k < taps; ++k) c[k] /= sum;
    }
    for (size_t k = 0; k < taps; ++k) {
      m.idx[base + k] = std::clamp<int64_t>(first + static_cast<int64_t>(k), 0, last);
      m.w[base + k] = c[k];
    }
  }
  return m;
}

// Nearest: a gather over all axes. `extrap` fills positions outside the crop box.
template <class T>
void nearest_gather(const Tensor& x, Tensor& y, const std::vector<AxisMap>& maps, T extrap) {
  const size_t rank = static_cast<size_t>(x.rank());
  const T* in = x.data<T>();
  T* out = y.data<T>();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const auto in_strides = strides_of(x.shape());
  const Shape& os = y.shape();
  // Per axis, input offsets of each output index (-1 when outside).
  std::vector<std::vector<int64_t>> off(rank);
  for (size_t a = 0; a < rank; ++a) {
    off[a].resize(static_cast<size_t>(os[a]));
    for (int64_t j = 0; j < os[a]; ++j) {
      const size_t ju = static_cast<size_t>(j);
      off[a][ju] = maps[a].outside[ju] ? -1 : maps[a].idx[ju] * in_strides[a];
    }
  }
  const int64_t inner = os[rank - 1];
  const int64_t rows = inner == 0 ? 0 : y.numel() / inner;
  std::vector<int64_t> index(rank, 0);
  const auto& last = off[rank - 1];
  int64_t prev_base = -1;  // base of the previous row, when it was inside
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    bool outside = false;
    for (size_t a = 0; a + 1 < rank; ++a) {
      const int64_t o = off[a][static_cast<size_t>(index[a])];
      if (o < 0) outside = true;
      base += o;
    }
    T* dst = out + row * inner;
    if (outside) {
      std::fill(dst, dst + inner, extrap);
      prev_base = -1;
    } else if (base == prev_base) {
      std::copy(dst - inner, dst, dst);  // same source row as the previous output row
    } else {
      const T* src = in + base;
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t o = last[static_cast<size_t>(j)];
        dst[j] = o < 0 ? extrap : src[o];
      }
      prev_base = base;
    }
    for (int64_t a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
      const size_t au = static_cast<size_t>(a);
      if (++index[au] < os[au]) break;
      index[au] = 0;
    }
  }
}

// Resizes `axis` of a buffer of shape `shape` (updated in place to the new length).
template <class C>
void interpolate_axis(const std::vector<C>& src, std::vector<C>& dst, Shape& shape, size_t axis,
                      const AxisMap& m, int64_t out_len, C extrap) {
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= shape[a];
  for (size_t a = axis + 1; a < shape.size(); ++a) inner *= shape[a];
  const int64_t in_len = shape[axis];
  const size_t taps = static_cast<size_t>(m.taps);
  dst.resize(static_cast<size_t>(outer * out_len * inner));
  std::vector<C> w(m.w.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<C>(m.w[i]);
  for (int64_t o = 0; o < outer; ++o) {
    const C* s = src.data() + o * in_len * inner;
    C* d0 = dst.data() + o * out_len * inner;
    if (inner == 1) {  // the last axis: one dot product per output element
      for (int64_t j = 0; j < out_len; ++j) {
        const size_t b = static_cast<size_t>(j) * taps;
        if (m.outside[static_cast<size_t>(j)]) {
          d0[j] = extrap;
          continue;
        }
        C acc = 0;
        for (size_t k = 0; k < taps; ++k) acc += w[b + k] * s[m.idx[b + k]];
        d0[j] = acc;
      }
      continue;
    }
    for (int64_t j = 0; j < out_len; ++j) {
      C* d = d0 + j * inner;
      if (m.outside[static_cast<size_t>(j)]) {
        std::fill(d, d + inner, extrap);
        continue;
      }
      const size_t b = static_cast<size_t>(j) * taps;
      const C w0 = w[b];
      const C* s0 = s + m.idx[b] * inner;
      for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
      for (size_t k = 1; k < taps; ++k) {
        const C wk = w[b + k];
        if (wk == C(0)) continue;
        const C* sk = s + m.idx[b + k] * inner;
        for (int64_t i = 0; i < inner; ++i) d[i] += wk * sk[i];
      }
    }
  }
  shape[axis] = out_len;
}

template <class T>
Status interpolate(const KernelContext& ctx, const Tensor& x, Tensor& y,
                   const std::vector<AxisMap>& maps, double extrapolation) {
  using C = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Float16> ||
                                   std::is_same_v<T, BFloat16>,
                               float, double>;
  const T* in = x.data<T>();
  std::vector<C> cur(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<C>(static_cast<compute_t<T>>(in[i]));
  Shape shape = x.shape();
  std::vector<C> next;
  for (int64_t a = x.rank() - 1; a >= 0; --a) {
    const size_t au = static_cast<size_t>(a);
    if (maps[au].identity) continue;
    Shape s2 = shape;
    s2[au] = y.dim(a);
    const int64_t n = shape_numel(s2);
    if (n < 0 || n > ctx.max_elements())
      return resource_exhausted("Resize: intermediate shape ", shape_to_string(s2),
                                " exceeds the element limit");
    interpolate_axis<C>(cur, next, shape, au, maps[au], y.dim(a), static_cast<C>(extrapolation));
    cur.swap(next);
  }
  T* out = y.data<T>();
  for (size_t i = 0; i < cur.size(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      double v = std::nearbyint(static_cast<double>(cur[i]));
      v = std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                     static_cast<double>(std::numeric_limits<T>::max()));
      out[i] = std::isnan(v) ? T(0) : static_cast<T>(v);
    } else {
      out[i] = cast_to<T>(cur[i]);
    }
  }
  return Status::Ok();
}

Status check_empty_axes(const Tensor& x, const ResizeParams& p, const char* op) {
  for (size_t a = 0; a < p.out_shape.size(); ++a)
    if (x.dim(static_cast<int64_t>(a)) == 0 && p.out_shape[a] != 0)
      return invalid_argument(op, ": cannot resize an empty axis ", a, " to length ",
                              p.out_shape[a]);
  return Status::Ok();
}

std::vector<AxisMap> build_maps(const Tensor& x, const ResizeParams& p) {
  std::vector<AxisMap> maps;
  for (size_t a = 0; a < p.out_shape.size(); ++a)
    maps.push_back(build_axis_map(p, a, x.dim(static_cast<int64_t>(a))));
  return maps;
}

Status run_resize(KernelContext& ctx, ResizeParams& p, const char* op) {
  const Tensor& x = ctx.input(0);
  OSPREY_RETURN_IF_ERROR(check_empty_axes(x, p, op));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), p.out_shape));
  if (y.numel() == 0) return Status::Ok();
  const std::vector<AxisMap> maps = build_maps(x, p);
  if (p.mode == Mode::kNearest) {
    if (x.dtype() == DType::kString) {
      nearest_gather<std::string>(x, y, maps, std::string());
      return Status::Ok();
    }
    return dispatch<NumericBoolTypes>(x.dtype(), op, [&]<class T>() {
      nearest_gather<T>(x, y, maps, cast_to<T>(p.extrapolation));
      return Status::Ok();
    });
  }
  return dispatch<NumericTypes>(
      x.dtype(), op, [&]<class T>() { return interpolate<T>(ctx, x, y, maps, p.extrapolation); });
}

Status parse_mode(const std::string& s, bool upsample, Mode* m) {
  if (s == "nearest")
    *m = Mode::kNearest;
  else if (s == "linear" || (upsample && s == "bilinear"))
    *m = Mode::kLinear;
  else if (s == "cubic" && !upsample)
    *m = Mode::kCubic;
  else
    return invalid_argument("unsupported mode '", s, "'");
  return Status::Ok();
}

// Reads a 1-D float scales tensor with one positive value per axis.
Status read_scales(const Tensor& t, size_t rank, std::vector<double>* out, bool listed = false) {
  if (!dtype_is_float(t.dtype())) return invalid_argument("scales must be a float tensor");
  if (t.rank() != 1 || static_cast<size_t>(t.numel()) != rank)
    return invalid_argument("scales must have one value per ", listed ? "listed" : "input", " axis (", rank,
                            "), got shape ",
                            shape_to_string(t.shape()));
  out->resize(rank);
  for (size_t a = 0; a < rank; ++a) {
    const double s = t.get_as_double(static_cast<int64_t>(a));
    if (!(s > 0) || !std::isfinite(s))
      return invalid_argument("scales[", a, "] = ", s, " must be positive and finite");
    (*out)[a] = s;
  }
  return Status::Ok();
}

// Output shape from scales: floor(in * scale).
Status shape_from_scales(const Tensor& x, ResizeParams& p) {
  const size_t rank = p.scales.size();
  p.out_shape.resize(rank);
  p.len_resized.resize(rank);
  for (size_t a = 0; a < rank; ++a) {
    const double len = static_cast<double>(x.dim(static_cast<int64_t>(a))) * p.scales[a];
    if (len >= 9.0e18) return invalid_argument("scales[", a, "] gives an output that is too large");
    p.len_resized[a] = len;
    p.out_shape[a] = static_cast<int64_t>(std::floor(len));
  }
  return Status::Ok();
}

// Resize's attributes and inputs into p.
Status parse_resize(KernelContext& ctx, ResizeParams& p) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  const size_t rank = static_cast<size_t>(x.rank());
  const int opset = ctx.opset();
  OSPREY_RETURN_IF_ERROR(parse_mode(ctx.attr_string("mode", "nearest"), false, &p.mode));
  if (opset < 11) {
    if (p.mode == Mode::kCubic) return invalid_argument("mode 'cubic' needs opset 11");
    if (!ctx.has_input(1)) return invalid_argument("input 1 (scales) is required");
    OSPREY_RETURN_IF_ERROR(read_scales(ctx.input(1), rank, &p.scales));
    return shape_from_scales(x, p);
  }

  const std::string ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ctm == "half_pixel")
    p.ctm = Ctm::kHalfPixel;
  else if (ctm == "pytorch_half_pixel")
    p.ctm = Ctm::kPytorchHalfPixel;
  else if (ctm == "align_corners")
    p.ctm = Ctm::kAlignCorners;
  else if (ctm == "asymmetric")
    p.ctm = Ctm::kAsymmetric;
  else if (ctm == "tf_half_pixel_for_nn")
    p.ctm = Ctm::kTfHalfPixelForNn;  // removed in 13; kept for old exporters
  else if (ctm == "tf_crop_and_resize")
    p.ctm = Ctm::kTfCropAndResize;
  else if (ctm == "half_pixel_symmetric" && opset >= 19)
    p.ctm = Ctm::kHalfPixelSymmetric;
  else
    return invalid_argument("unsupported coordinate_transformation_mode '", ctm, "'");
  const std::string nm = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor")
    p.nearest = NearestMode::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil")
    p.nearest = NearestMode::kRoundPreferCeil;
  else if (nm == "floor")
    p.nearest = NearestMode::kFloor;
  else if (nm == "ceil")
    p.nearest = NearestMode::kCeil;
  else
    return invalid_argument("unsupported nearest_mode '", nm, "'");
  p.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
  const int64_t excl = ctx.attr_int("exclude_outside", 0);
  if (excl != 0 && excl != 1) return invalid_argument("exclude_outside must be 0 or 1");
  p.exclude_outside = excl == 1;
  p.extrapolation = ctx.attr_float("extrapolation_value", 0.0f);

  // Opset 18: antialias, and `axes` naming the axes that scales, sizes and roi list (the
  // others keep their length), and keep_aspect_ratio_policy for sizes.
  std::vector<int64_t> axes;
  std::string policy = "stretch";
  if (opset >= 18) {
    const int64_t aa = ctx.attr_int("antialias", 0);
    if (aa != 0 && aa != 1) return invalid_argument("antialias must be 0 or 1, got ", aa);
    p.antialias = aa == 1;
    policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return invalid_argument("unsupported keep_aspect_ratio_policy '", policy, "'");
    if (ctx.has_attr("axes")) {
      std::vector<bool> seen(rank, false);
      for (int64_t a : ctx.attr_ints("axes")) {
        const int64_t r = static_cast<int64_t>(rank);
        if (a < -r || a >= r) return invalid_argument("axes value ", a, " is out of range for rank ", r);
        if (a < 0) a += r;
        if (seen[static_cast<size_t>(a)]) return invalid_argument("axes lists axis ", a, " twice");
        seen[static_cast<size_t>(a)] = true;
        axes.push_back(a);
      }
    }
  }
  if (axes.empty() && !ctx.has_attr("axes"))
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  const size_t na = axes.size();

  // Inputs: X, roi, scales, sizes. An empty tensor counts as absent.
  auto present = [&](int i) { return ctx.has_input(i) && ctx.input(i).numel() > 0; };
  const bool has_scales = present(2), has_sizes = present(3);
  if (has_scales == has_sizes)
    return invalid_argument("exactly one of scales and sizes must be given (non-empty)");
  if (has_scales) {
    std::vector<double> listed;
    OSPREY_RETURN_IF_ERROR(read_scales(ctx.input(2), na, &listed, na != rank));
    p.scales.assign(rank, 1.0);
    for (size_t i = 0; i < na; ++i) p.scales[static_cast<size_t>(axes[i])] = listed[i];
    OSPREY_RETURN_IF_ERROR(shape_from_scales(x, p));
  } else {
    const Tensor& s = ctx.input(3);
    if (s.dtype() != DType::kInt64) return invalid_argument("sizes must be int64");
    if (s.rank() != 1 || static_cast<size_t>(s.numel()) != na)
      return invalid_argument("sizes must have one value per ", na == rank ? "input axis (" : "listed axis (",
                              na, "), got shape ", shape_to_string(s.shape()));
    p.out_shape = x.shape();
    for (size_t i = 0; i < na; ++i) {
      const int64_t v = s.data<int64_t>()[i];
      if (v < 0) return invalid_argument("sizes[", i, "] is negative");
      p.out_shape[static_cast<size_t>(axes[i])] = v;
    }
    p.scales.resize(rank);
    p.len_resized.resize(rank);
    for (size_t a = 0; a < rank; ++a) {
      const int64_t in = x.dim(static_cast<int64_t>(a));
      p.len_resized[a] = static_cast<double>(p.out_shape[a]);
      p.scales[a] = in == 0 ? 1.0 : static_cast<double>(p.out_shape[a]) / static_cast<double>(in);
      if (p.scales[a] == 0) p.scales[a] = 1.0;  // empty output: scale is never used
    }
    if (policy != "stretch" && na > 0) {
      // One scale for the listed axes: the smallest (not_larger) or largest (not_smaller) of
      // theirs; each listed length becomes round_half_up(scale * in).
      double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t a : axes) {
        const int64_t in = x.dim(a);
        if (in == 0) return invalid_argument("keep_aspect_ratio_policy '", policy, "' on the empty axis ", a);
        const double r = static_cast<double>(p.out_shape[static_cast<size_t>(a)]) / static_cast<double>(in);
        scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      if (!(scale > 0)) return invalid_argument("keep_aspect_ratio_policy '", policy, "' gives a zero scale");
      for (int64_t a : axes) {
        const size_t au = static_cast<size_t>(a);
        const double len = scale * static_cast<double>(x.dim(a));
        if (len >= 9.0e18) return invalid_argument("sizes give an output that is too large");
        p.scales[au] = scale;
        p.len_resized[au] = len;
        p.out_shape[au] = static_cast<int64_t>(std::floor(len + 0.5));
      }
    }
  }
  if (p.ctm == Ctm::kTfCropAndResize) {
    p.roi.assign(2 * rank, 0.0);
    for (size_t a = 0; a < rank; ++a) p.roi[rank + a] = 1.0;
    if (ctx.has_input(1) && ctx.input(1).numel() > 0) {
      const Tensor& r = ctx.input(1);
      if (!dtype_is_float(r.dtype())) return invalid_argument("roi must be a float tensor");
      if (r.rank() != 1 || static_cast<size_t>(r.numel()) != 2 * na)
        return invalid_argument("roi must have 2 * ", na == rank ? "rank" : "the listed axes", " (", 2 * na,
                                ") values, got shape ", shape_to_string(r.shape()));
      for (size_t i = 0; i < 2 * na; ++i) {
        const double v = r.get_as_double(static_cast<int64_t>(i));
        if (!std::isfinite(v)) return invalid_argument("roi[", i, "] is not finite");
        const size_t a = static_cast<size_t>(axes[i % na]);
        p.roi[i < na ? a : rank + a] = v;
      }
    }
  }
  return Status::Ok();
}

// Upsample's attributes and inputs into p.
Status parse_upsample(KernelContext& ctx, ResizeParams& p) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  const size_t rank = static_cast<size_t>(x.rank());
  OSPREY_RETURN_IF_ERROR(parse_mode(ctx.attr_string("mode", "nearest"), true, &p.mode));
  if (ctx.opset() >= 9) {
    if (!ctx.has_input(1)) return invalid_argument("input 1 (scales) is required");
    OSPREY_RETURN_IF_ERROR(read_scales(ctx.input(1), rank, &p.scales));
  } else {
    if (!ctx.has_attr("scales")) return invalid_argument("attribute 'scales' is required");
    OSPREY_RETURN_IF_ERROR(
        read_scales(Tensor::from_vector(ctx.attr_floats("scales")), rank, &p.scales));
  }
  return shape_from_scales(x, p);
}

}  // namespace

Status resize(KernelContext& ctx) {
  ResizeParams p;
  OSPREY_RETURN_IF_ERROR(parse_resize(ctx, p));
  return run_resize(ctx, p, "Resize");
}

Status upsample(KernelContext& ctx) {
  ResizeParams p;
  OSPREY_RETURN_IF_ERROR(parse_upsample(ctx, p));
  return run_resize(ctx, p, "Upsample");
}

Status resize_plan(KernelContext& ctx, bool upsample, ResizePlan* plan) {
  ResizeParams p;
  OSPREY_RETURN_IF_ERROR(upsample ? parse_upsample(ctx, p) : parse_resize(ctx, p));
  OSPREY_RETURN_IF_ERROR(check_empty_axes(ctx.input(0), p, upsample ? "Upsample" : "Resize"));
  plan->out_shape = p.out_shape;
  plan->axes = build_maps(ctx.input(0), p);
  plan->interpolated = p.mode != Mode::kNearest;
  return Status::Ok();
}

}  // namespace osprey::ref
