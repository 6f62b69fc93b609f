// Softmax family: Softmax, LogSoftmax, Hardmax.
//
// Before opset 13 the input is coerced to 2-D at `axis` (default 1): rows are the product
// of the leading dims, and the op works along the flattened trailing dims. From opset 13
// it works along the single axis `axis` (default -1).
#include <cmath>
#include <limits>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

}  // namespace

Status softmax_view(const Tensor& x, int64_t opset, int64_t axis_attr, SoftmaxView* v) {
  const int64_t rank = x.rank();
  const bool coerce = opset < 13;
  int64_t axis = 0;
  if (coerce && rank > 0 && axis_attr == rank) {
    axis = rank;  // flattening to [N, 1] is well defined
  } else {
    OSPREY_RETURN_IF_ERROR(normalize_axis(axis_attr, rank, &axis));
  }
  *v = {};
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) v->outer *= x.dim(d);
    else if (d == axis || coerce) v->n *= x.dim(d);
    else v->inner *= x.dim(d);
  }
  return Status::Ok();
}

Status softmax_view(const KernelContext& ctx, const Tensor& x, SoftmaxView* v) {
  return softmax_view(x, ctx.opset(), ctx.attr_int("axis", ctx.opset() < 13 ? 1 : -1), v);
}

namespace {

template <class T>
void run_softmax(const T* in, T* out, const SoftmaxView& v, Mode mode) {
  using C = compute_t<T>;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.n * v.inner + i;
      const T* p = in + base;
      T* q = out + base;
      if (v.n == 0) continue;
      if (mode == Mode::kHardmax) {
        int64_t best = 0;
        C bv = static_cast<C>(p[0]);
        for (int64_t k = 1; k < v.n; ++k) {
          const C x = static_cast<C>(p[k * v.inner]);
          if (x > bv) {
            bv = x;
            best = k;
          }
        }
        for (int64_t k = 0; k < v.n; ++k) q[k * v.inner] = cast_to<T>(k == best ? 1 : 0);
        continue;
      }
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < v.n; ++k) m = std::max(m, static_cast<double>(static_cast<C>(p[k * v.inner])));
      if (std::isinf(m)) m = 0;  // all -inf (or +inf present): let the exp/log give inf/NaN
      double s = 0;
      for (int64_t k = 0; k < v.n; ++k)
        s += std::exp(static_cast<double>(static_cast<C>(p[k * v.inner])) - m);
      if (mode == Mode::kSoftmax) {
        for (int64_t k = 0; k < v.n; ++k)
          q[k * v.inner] =
              cast_to<T>(std::exp(static_cast<double>(static_cast<C>(p[k * v.inner])) - m) / s);
      } else {
        const double ls = std::log(s);
        for (int64_t k = 0; k < v.n; ++k)
          q[k * v.inner] = cast_to<T>(static_cast<double>(static_cast<C>(p[k * v.inner])) - m - ls);
      }
    }
  }
}

Status softmax_kernel(KernelContext& ctx, Mode mode, const char* name) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  SoftmaxView v;
  OSPREY_RETURN_IF_ERROR(softmax_view(ctx, x, &v));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  if (x.numel() == 0) return Status::Ok();
  return dispatch<FloatTypes>(x.dtype(), name, [&]<class T>() {
    run_softmax<T>(x.data<T>(), y.data<T>(), v, mode);
    return Status::Ok();
  });
}

}  // namespace

Status softmax(KernelContext& ctx) { return softmax_kernel(ctx, Mode::kSoftmax, "Softmax"); }
Status log_softmax(KernelContext& ctx) {
  return softmax_kernel(ctx, Mode::kLogSoftmax, "LogSoftmax");
}
Status hardmax(KernelContext& ctx) { return softmax_kernel(ctx, Mode::kHardmax, "Hardmax"); }

}  // namespace osprey::ref
