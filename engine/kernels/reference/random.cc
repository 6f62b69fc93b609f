// Random generators: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike
// (opset 1), Multinomial (opset 7), Bernoulli (opset 15).
//
// With the `seed` attribute the output is deterministic (the same on every run and
// platform: a 64-bit Mersenne Twister with our own uniform/normal transforms); without it
// each run draws a fresh seed. Values cannot match other runtimes bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

class Rng {
 public:
  explicit Rng(const KernelContext& ctx) {
    if (ctx.has_attr("seed")) {
      const float s = ctx.attr_float("seed", 0.0f);
      uint32_t bits;
      std::memcpy(&bits, &s, sizeof bits);
      gen_.seed(0x9E3779B97F4A7C15ull ^ bits);
    } else {
      std::random_device rd;
      gen_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());
    }
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  // Standard normal by the Box-Muller transform.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 gen_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// The output dtype from the `dtype` attribute, else `def` (kUndefined: required).
Status output_dtype(const KernelContext& ctx, DType def, DType* out) {
  if (!ctx.has_attr("dtype")) {
    if (def == DType::kUndefined) return invalid_argument("attribute 'dtype' is required");
    *out = def;
    return Status::Ok();
  }
  const int64_t v = ctx.attr_int("dtype", 1);
  if (v < 0 || v > 64 || !dtype_is_valid(static_cast<DType>(v)))
    return invalid_argument("dtype ", v, " is not a valid element type");
  *out = static_cast<DType>(v);
  return Status::Ok();
}

Status float_output(const KernelContext& ctx, DType def, DType* out) {
  OSPREY_RETURN_IF_ERROR(output_dtype(ctx, def, out));
  if (!dtype_is_float(*out))
    return invalid_argument("output dtype ", dtype_name(*out), " must be a float type");
  return Status::Ok();
}

Status fill_random(KernelContext& ctx, DType dt, const Shape& shape, bool normal) {
  const double a = normal ? ctx.attr_float("mean", 0.0f) : ctx.attr_float("low", 0.0f);
  const double b = normal ? ctx.attr_float("scale", 1.0f) : ctx.attr_float("high", 1.0f);
  if (!std::isfinite(a) || !std::isfinite(b))
    return invalid_argument(normal ? "mean and scale" : "low and high", " must be finite");
  if (!normal && b < a) return invalid_argument("high must not be less than low");
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, shape));
  Rng rng(ctx);
  return dispatch<FloatTypes>(dt, normal ? "RandomNormal" : "RandomUniform", [&]<class T>() {
    T* out = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i)
      out[i] = cast_to<T>(normal ? a + b * rng.normal() : a + (b - a) * rng.uniform());
    return Status::Ok();
  });
}

Status random_shape(const KernelContext& ctx, Shape* shape) {
  if (!ctx.has_attr("shape")) return invalid_argument("attribute 'shape' is required");
  *shape = ctx.attr_ints("shape");
  for (int64_t d : *shape)
    if (d < 0) return invalid_argument("shape ", shape_to_string(*shape), " has a negative dim");
  return Status::Ok();
}

Status random_like(KernelContext& ctx, bool normal) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  DType dt;
  OSPREY_RETURN_IF_ERROR(float_output(ctx, x.dtype(), &dt));
  return fill_random(ctx, dt, x.shape(), normal);
}

}  // namespace

Status random_uniform(KernelContext& ctx) {
  Shape shape;
  OSPREY_RETURN_IF_ERROR(random_shape(ctx, &shape));
  DType dt;
  OSPREY_RETURN_IF_ERROR(float_output(ctx, DType::kFloat32, &dt));
  return fill_random(ctx, dt, shape, false);
}

Status random_normal(KernelContext& ctx) {
  Shape shape;
  OSPREY_RETURN_IF_ERROR(random_shape(ctx, &shape));
  DType dt;
  OSPREY_RETURN_IF_ERROR(float_output(ctx, DType::kFloat32, &dt));
  return fill_random(ctx, dt, shape, true);
}

Status random_uniform_like(KernelContext& ctx) { return random_like(ctx, false); }
Status random_normal_like(KernelContext& ctx) { return random_like(ctx, true); }

Status bernoulli(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  if (!dtype_is_float(x.dtype())) return invalid_argument("input must be a float tensor");
  DType dt;
  OSPREY_RETURN_IF_ERROR(output_dtype(ctx, x.dtype(), &dt));
  if (dt == DType::kString) return invalid_argument("dtype must be numeric or bool");
  std::vector<double> p(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = x.get_as_double(static_cast<int64_t>(i));
    if (!(p[i] >= 0 && p[i] <= 1))
      return invalid_argument("input[", i, "] = ", p[i], " is not a probability in [0, 1]");
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, x.shape()));
  Rng rng(ctx);
  return dispatch<NumericBoolTypes>(dt, "Bernoulli", [&]<class T>() {
    T* out = y.data<T>();
    for (size_t i = 0; i < p.size(); ++i) {
      const bool one = rng.uniform() < p[i];
      if constexpr (std::is_same_v<T, bool>)
        out[i] = one;
      else
        out[i] = cast_to<T>(one ? 1 : 0);
    }
    return Status::Ok();
  });
}

Status multinomial(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 2));
  const Tensor& x = ctx.input(0);
  if (!dtype_is_float(x.dtype())) return invalid_argument("input must be a float tensor");
  DType dt;
  OSPREY_RETURN_IF_ERROR(output_dtype(ctx, DType::kInt32, &dt));
  if (dt != DType::kInt32 && dt != DType::kInt64)
    return invalid_argument("dtype must be int32 or int64, got ", dtype_name(dt));
  const int64_t samples = ctx.attr_int("sample_size", 1);
  if (samples < 0) return invalid_argument("sample_size must be non-negative");
  const int64_t batch = x.dim(0), classes = x.dim(1);
  if (classes == 0 && batch > 0 && samples > 0)
    return invalid_argument("cannot sample from zero classes");
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, {batch, samples}));
  Rng rng(ctx);
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    // Input rows are unnormalized log-probabilities: cdf of exp(x - max).
    double mx = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, x.get_as_double(b * classes + c));
    if (!std::isfinite(mx)) return invalid_argument("row ", b, " has no finite log-probability");
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const double v = x.get_as_double(b * classes + c);
      if (std::isnan(v)) return invalid_argument("row ", b, " contains NaN");
      total += std::exp(v - mx);
      cdf[static_cast<size_t>(c)] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      const double u = rng.uniform() * total;
      int64_t k = static_cast<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      if (k >= classes) k = classes - 1;
      if (dt == DType::kInt32)
        y.data<int32_t>()[b * samples + s] = static_cast<int32_t>(k);
      else
        y.data<int64_t>()[b * samples + s] = k;
    }
  }
  return Status::Ok();
}

}  // namespace osprey::ref
