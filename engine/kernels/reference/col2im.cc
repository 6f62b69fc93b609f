// Col2Im (opset 18): the inverse of im2col. Input [N, C * prod(block_shape), L] holds, for each
// of the L sliding positions of a block over the padded image, the block's C * prod(block)
// values; each is added into the image [N, C, image_shape...] at its position (values that
// land in the padding are dropped). Any number of spatial dims.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

Status col2im(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 3));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> image, block;
  OSPREY_RETURN_IF_ERROR(tensor_ops::read_int_input(ctx, 1, "image_shape", &image));
  OSPREY_RETURN_IF_ERROR(tensor_ops::read_int_input(ctx, 2, "block_shape", &block));
  const size_t r = image.size();
  if (r == 0 || block.size() != r)
    return invalid_argument("image_shape and block_shape must have the same, non-zero length; got ", r, " and ",
                            block.size());
  auto ints = [&](const char* name, int64_t def, size_t count) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> v = ctx.has_attr(name) ? ctx.attr_ints(name) : std::vector<int64_t>(count, def);
    if (v.size() != count) return invalid_argument(name, " must have ", count, " values, got ", v.size());
    return v;
  };
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> dil, ints("dilations", 1, r));
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints("pads", 0, 2 * r));
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> str, ints("strides", 1, r));
  int64_t kprod = 1, positions = 1;
  std::vector<int64_t> grid(r);
  constexpr int64_t kBig = int64_t{1} << 40;  // keeps the arithmetic below in range
  for (size_t d = 0; d < r; ++d) {
    if (image[d] < 0 || block[d] <= 0 || dil[d] <= 0 || str[d] <= 0 || pads[d] < 0 || pads[d + r] < 0)
      return invalid_argument("Col2Im: image_shape must be >= 0, block_shape, dilations and strides > 0, pads >= 0");
    if (image[d] > kBig || block[d] > kBig || dil[d] > kBig || str[d] > kBig || pads[d] > kBig || pads[d + r] > kBig)
      return invalid_argument("Col2Im: a value of image_shape, block_shape, dilations, strides or pads is too large");
    const int64_t extent = dil[d] * (block[d] - 1) + 1, padded = image[d] + pads[d] + pads[d + r];
    if (padded < extent)
      return invalid_argument("block ", block[d], " (dilated ", extent, ") exceeds the padded image ", padded,
                              " along spatial dim ", d);
    grid[d] = (padded - extent) / str[d] + 1;
    kprod *= block[d];
    positions *= grid[d];
  }
  const int64_t n = x.dim(0);
  if (x.dim(1) % kprod != 0)
    return invalid_argument("input dim 1 (", x.dim(1), ") is not a multiple of the block size ", kprod);
  if (x.dim(2) != positions)
    return invalid_argument("input dim 2 (", x.dim(2), ") differs from the ", positions, " block positions");
  const int64_t c = x.dim(1) / kprod;
  Shape out{n, c};
  for (int64_t v : image) out.push_back(v);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));  // zero-filled
  if (y.numel() == 0 || x.numel() == 0) return Status::Ok();
  const std::vector<int64_t> istr = strides_of(Shape(image.begin(), image.end()));
  const int64_t img = shape_numel(Shape(image.begin(), image.end()));
  return dispatch<NumericTypes>(x.dtype(), "Col2Im", [&]<class T>() {
    const T* in = x.data<T>();
    T* o = y.data<T>();
    std::vector<int64_t> k(r), p(r);
    for (int64_t b = 0; b < n * c; ++b) {
      T* dst = o + b * img;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t kk = 0; kk < kprod; ++kk) {
        const T* src = in + (b * kprod + kk) * positions;
        std::fill(p.begin(), p.end(), 0);
        for (int64_t l = 0; l < positions; ++l) {
          int64_t off = 0;
          bool inside = true;
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t at = p[d] * str[d] - pads[d] + k[d] * dil[d];
            inside = at >= 0 && at < image[d];
            off += at * istr[d];
          }
          if (inside) {
            if constexpr (std::is_integral_v<T>)
              dst[off] = static_cast<T>(dst[off] + src[l]);
            else
              dst[off] = cast_to<T>(cast_to<double>(dst[off]) + cast_to<double>(src[l]));
          }
          for (size_t d = r; d-- > 0;) {
            if (++p[d] < grid[d]) break;
            p[d] = 0;
          }
        }
        for (size_t d = r; d-- > 0;) {
          if (++k[d] < block[d]) break;
          k[d] = 0;
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
