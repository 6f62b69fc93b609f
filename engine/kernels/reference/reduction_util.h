// Helpers shared by the reduction-family kernels (reduce.cc, normalization.cc, loss.cc):
// a plan that splits a tensor into kept and reduced axes, and accumulator types.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {

// Accumulator for sums and products: double for floats, 64-bit ints otherwise.
template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// Wrapping integer arithmetic (two's complement, no signed-overflow UB); plain for floats.
template <class A>
inline A acc_add(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <class A>
inline A acc_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}

// Splits `shape` into kept and reduced axes. For each output position (row-major over the
// kept axes) `base[i]` is its input offset; `inner[j]` lists the input offsets, relative to a
// base, of the reduced positions (row-major over the reduced axes).
struct ReducePlan {
  Shape out_shape;            // keepdims form (reduced axes set to 1)
  Shape squeezed_shape;       // reduced axes removed
  std::vector<int64_t> base;  // one per output element
  std::vector<int64_t> inner; // one per reduced element
};

// `reduce[d]` is true for each reduced axis. Sizes are already checked (the input exists).
inline ReducePlan make_reduce_plan(const Shape& shape, const std::vector<bool>& reduce) {
  ReducePlan p;
  const auto strides = strides_of(shape);
  Shape kept_dims, red_dims;
  std::vector<int64_t> kept_strides, red_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduce[d]) {
      p.out_shape.push_back(1);
      red_dims.push_back(shape[d]);
      red_strides.push_back(strides[d]);
    } else {
      p.out_shape.push_back(shape[d]);
      p.squeezed_shape.push_back(shape[d]);
      kept_dims.push_back(shape[d]);
      kept_strides.push_back(strides[d]);
    }
  }
  auto offsets = [](const Shape& dims, const std::vector<int64_t>& st) {
    const int64_t n = shape_numel(dims);
    std::vector<int64_t> out(static_cast<size_t>(n > 0 ? n : 0));
    StridedIter it(dims, {st});
    for (int64_t i = 0; i < n; ++i, it.next()) out[static_cast<size_t>(i)] = it.offset(0);
    return out;
  };
  p.base = offsets(kept_dims, kept_strides);
  p.inner = offsets(red_dims, red_strides);
  return p;
}

// Reads a Reduce* node's axes (the attribute, or from opset `axes_input_since` the optional
// input 1) into `reduce` (one flag per axis of x); sets *noop when the node asks for the
// identity (empty axes with noop_with_empty_axes).
Status reduce_axes(const KernelContext& ctx, int axes_input_since, const Tensor& x,
                   std::vector<bool>* reduce, bool* noop);

// Sizes of the dims of `s` before, at and after `axis` (scan_ops.cc; the CPU ArgMax / ArgMin
// and CumSum kernels view their input the same way).
void split_at_axis(const Shape& s, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner);

// Reference kernels that the fast CPU kernels (engine/kernels/cpu) hand the cases they do not
// cover to.
Status reduce_sum(KernelContext& ctx);
Status reduce_mean(KernelContext& ctx);
Status reduce_max(KernelContext& ctx);
Status reduce_min(KernelContext& ctx);
Status layer_normalization(KernelContext& ctx);
// What com.osprey LayerNormalization adds to the ONNX op's checks: float32 X, Scale and B, and
// output Y only (fused.cc).
Status check_fused_layer_norm(const KernelContext& ctx);

}  // namespace osprey::ref
