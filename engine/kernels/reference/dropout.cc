// Dropout: identity at inference (and in training with ratio 0); in training mode, zeroes
// elements with probability `ratio` using a seeded generator and scales the rest.
#include <cstdint>
#include <limits>
#include <random>

#include "kernels/reference/common.h"

namespace osprey::ref {

namespace {
// Fills output 1 (the mask) when requested: bool from opset 10, the input type before.
Result<Tensor> new_mask(KernelContext& ctx, const Tensor& x) {
  const DType dt = ctx.opset() >= 10 ? DType::kBool : x.dtype();
  return ctx.new_output(1, dt, x.shape());
}
}  // namespace

Status dropout(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, std::numeric_limits<int64_t>::max()));
  const Tensor& x = ctx.input(0);
  if (!dtype_is_float(x.dtype()))
    return invalid_argument("input 'data' must be a float tensor, got ", dtype_name(x.dtype()));
  double ratio = 0.5;
  bool training = false;
  if (ctx.opset() < 12) {
    // Older opsets describe inference only (is_test is ignored by inference engines).
    ratio = ctx.attr_float("ratio", 0.5f);
  } else {
    if (ctx.has_input(1)) {
      const Tensor& r = ctx.input(1);
      if (!dtype_is_float(r.dtype()) || r.numel() != 1)
        return invalid_argument("input 'ratio' must be a float scalar");
      ratio = r.get_as_double(0);
    }
    if (ctx.has_input(2)) {
      const Tensor& t = ctx.input(2);
      if (t.dtype() != DType::kBool || t.numel() != 1)
        return invalid_argument("input 'training_mode' must be a bool scalar");
      training = t.data<bool>()[0];
    }
  }
  if (!(ratio >= 0.0 && ratio < 1.0))
    return invalid_argument("ratio ", ratio, " must be in [0, 1)");
  const bool want_mask = ctx.output_requested(1);

  if (!training || ratio == 0.0) {
    ctx.set_output(0, x.reshaped(x.shape()));  // pass-through, sharing storage
    if (!want_mask) return Status::Ok();
    OSPREY_ASSIGN_OR_RETURN(Tensor mask, new_mask(ctx, x));
    return dispatch<NumericBoolTypes>(mask.dtype(), "Dropout", [&]<class T>() {
      T* m = mask.data<T>();
      for (int64_t i = 0; i < mask.numel(); ++i) m[i] = cast_to<T>(1);
      return Status::Ok();
    });
  }

  // Training: keep each element with probability 1 - ratio, scaled by 1 / (1 - ratio).
  std::mt19937_64 gen;
  if (ctx.has_attr("seed")) {
    gen.seed(static_cast<uint64_t>(ctx.attr_int("seed", 0)));
  } else {
    std::random_device rd;
    gen.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  std::vector<bool> keep(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < keep.size(); ++i) {
    const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    keep[i] = u >= ratio;
  }
  const double scale = 1.0 / (1.0 - ratio);
  OSPREY_RETURN_IF_ERROR(dispatch<FloatTypes>(x.dtype(), "Dropout", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      out[i] = keep[static_cast<size_t>(i)]
                   ? cast_to<T>(static_cast<double>(static_cast<compute_t<T>>(in[i])) * scale)
                   : cast_to<T>(0.0);
    return Status::Ok();
  }));
  if (!want_mask) return Status::Ok();
  OSPREY_ASSIGN_OR_RETURN(Tensor mask, new_mask(ctx, x));
  return dispatch<NumericBoolTypes>(mask.dtype(), "Dropout", [&]<class T>() {
    T* m = mask.data<T>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = cast_to<T>(keep[static_cast<size_t>(i)] ? 1 : 0);
    return Status::Ok();
  });
}

}  // namespace osprey::ref
