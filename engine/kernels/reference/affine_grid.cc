// AffineGrid (opset 20): the sampling grid of GridSample for a batch of affine matrices.
// theta [N, 2, 3] with size [N, C, H, W] gives [N, H, W, 2]; theta [N, 3, 4] with
// size [N, C, D, H, W] gives [N, D, H, W, 3]. Each point is theta times its normalized
// position (x, y[, z], 1), the positions spanning [-1, 1] at the pixel corners
// (align_corners = 1) or centres (0). Computed in double.
#include <algorithm>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

Status affine_grid(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 3));
  const Tensor& theta = ctx.input(0);
  std::vector<int64_t> size;
  OSPREY_RETURN_IF_ERROR(tensor_ops::read_int_input(ctx, 1, "size", &size));
  if (size.size() != 4 && size.size() != 5)
    return invalid_argument("size must have 4 ([N, C, H, W]) or 5 ([N, C, D, H, W]) values, got ", size.size());
  const int64_t r = static_cast<int64_t>(size.size()) - 2;  // spatial dims
  const int64_t n = size[0];
  if (theta.dim(0) != n || theta.dim(1) != r || theta.dim(2) != r + 1)
    return invalid_argument("theta has shape ", shape_to_string(theta.shape()), "; size ",
                            shape_to_string(Shape(size.begin(), size.end())), " needs [", n, ", ", r, ", ", r + 1, "]");
  const int64_t align = ctx.attr_int("align_corners", 0);
  if (align != 0 && align != 1) return invalid_argument("align_corners must be 0 or 1");
  Shape out{n};
  for (int64_t d = 0; d < r; ++d) {
    if (size[static_cast<size_t>(d + 2)] < 0) return invalid_argument("size[", d + 2, "] is negative");
    out.push_back(size[static_cast<size_t>(d + 2)]);
  }
  out.push_back(r);
  const int64_t total = shape_numel(out);
  if (n < 0 || total < 0 || total > ctx.max_elements())
    return resource_exhausted("AffineGrid: output ", shape_to_string(out), " exceeds the element limit");
  const int64_t points = n == 0 ? 0 : total / (n * r);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, theta.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  // Normalized positions along each spatial dim (outermost first).
  std::vector<std::vector<double>> pos(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    const int64_t len = out[static_cast<size_t>(d + 1)];
    for (int64_t i = 0; i < len; ++i)
      pos[static_cast<size_t>(d)].push_back(
          align ? (len > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1) : -1.0)
                : -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len));
  }
  return dispatch<FloatTypes>(theta.dtype(), "AffineGrid", [&]<class T>() {
    const T* th = theta.data<T>();
    T* o = y.data<T>();
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    std::vector<double> p(static_cast<size_t>(r + 1), 1.0);  // (x, y[, z], 1)
    for (int64_t b = 0; b < n; ++b) {
      const T* m = th + b * r * (r + 1);
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t i = 0; i < points; ++i) {
        for (int64_t d = 0; d < r; ++d)  // x is the innermost dim's position
          p[static_cast<size_t>(d)] = pos[static_cast<size_t>(r - 1 - d)][static_cast<size_t>(idx[static_cast<size_t>(r - 1 - d)])];
        T* q = o + (b * points + i) * r;
        for (int64_t row = 0; row < r; ++row) {
          double acc = 0;
          for (int64_t k = 0; k <= r; ++k) acc += cast_to<double>(m[row * (r + 1) + k]) * p[static_cast<size_t>(k)];
          q[row] = cast_to<T>(acc);
        }
        for (int64_t d = r; d-- > 0;) {
          if (++idx[static_cast<size_t>(d)] < out[static_cast<size_t>(d + 1)]) break;
          idx[static_cast<size_t>(d)] = 0;
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
