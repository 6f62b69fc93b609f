// CenterCropPad (opset 18): each listed axis cropped or zero-padded to its target length
// around the centre (the first floor(|difference| / 2) elements cropped or padded at the start).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

Status center_crop_pad(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<int64_t> target, axes;
  OSPREY_RETURN_IF_ERROR(tensor_ops::read_int_input(ctx, 1, "shape", &target));
  if (ctx.has_attr("axes")) {
    axes = ctx.attr_ints("axes");
    OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, r));
  } else {
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  }
  if (target.size() != axes.size())
    return invalid_argument("shape has ", target.size(), " values for ", axes.size(), " axes");
  Shape out = x.shape();
  std::vector<int64_t> src0(static_cast<size_t>(r), 0), dst0(static_cast<size_t>(r), 0), len = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(axes[k]);
    const int64_t dim = x.shape()[a], t = target[k];
    if (t < 0) return invalid_argument("shape[", k, "] = ", t, " is negative");
    out[a] = t;
    len[a] = std::min(dim, t);
    if (t < dim) src0[a] = (dim - t) / 2;
    else dst0[a] = (t - dim) / 2;
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));  // zero-filled
  if (y.numel() == 0 || shape_numel(len) == 0) return Status::Ok();
  const auto xs = strides_of(x.shape()), ys = strides_of(out);
  return dispatch<AllTypes>(x.dtype(), "CenterCropPad", [&]<class T>() {
    const T* in = x.data<T>();
    T* o = y.data<T>();
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    const int64_t total = shape_numel(len);
    for (int64_t i = 0; i < total; ++i) {
      int64_t si = 0, di = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        si += (src0[d] + idx[d]) * xs[d];
        di += (dst0[d] + idx[d]) * ys[d];
      }
      o[di] = in[si];
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < len[d]) break;
        idx[d] = 0;
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
