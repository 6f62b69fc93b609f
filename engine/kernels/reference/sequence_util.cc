#include "kernels/reference/sequence_util.h"

#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref::seq {

namespace {
// Copies `count` rows of `row` elements: dst rows at dst_stride, src rows at src_stride.
Status copy_rows(const Tensor& src, int64_t src_off, int64_t src_stride, Tensor& dst, int64_t dst_off,
                 int64_t dst_stride, int64_t rows, int64_t row) {
  return tensor_ops::dispatch_elem(src.dtype(), "copy", [&]<class E>() {
    for (int64_t r = 0; r < rows; ++r)
      E::copy_n(dst.raw_data(), dst_off + r * dst_stride, src.raw_data(), src_off + r * src_stride, row);
    return Status::Ok();
  });
}
int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}
}  // namespace

Result<Tensor> take(const Tensor& t, int64_t axis, int64_t index, int64_t max_elements) {
  if (axis < 0 || axis >= t.rank()) return invalid_argument("axis ", axis, " out of range for rank ", t.rank());
  if (index < 0 || index >= t.dim(axis)) return invalid_argument("index ", index, " out of range for dim ", t.dim(axis));
  Shape out_shape = t.shape();
  out_shape.erase(out_shape.begin() + axis);
  OSPREY_ASSIGN_OR_RETURN(Tensor out, Tensor::create(t.dtype(), out_shape, max_elements));
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = prod(t.shape(), 0, a), inner = prod(t.shape(), a + 1, t.shape().size());
  OSPREY_RETURN_IF_ERROR(copy_rows(t, index * inner, t.dim(axis) * inner, out, 0, inner, outer, inner));
  return out;
}

Result<Tensor> concat(const std::vector<Tensor>& parts, int64_t axis, int64_t max_elements) {
  if (parts.empty()) return invalid_argument("nothing to concatenate");
  const Tensor& p0 = parts[0];
  if (axis < 0 || axis >= p0.rank()) return invalid_argument("axis ", axis, " out of range for rank ", p0.rank());
  const size_t a = static_cast<size_t>(axis);
  Shape out_shape = p0.shape();
  out_shape[a] = 0;
  for (const auto& p : parts) {
    if (p.dtype() != p0.dtype()) return invalid_argument("tensors of different types cannot be concatenated");
    if (p.rank() != p0.rank()) return invalid_argument("tensors of different ranks cannot be concatenated");
    for (size_t d = 0; d < out_shape.size(); ++d)
      if (d != a && p.shape()[d] != p0.shape()[d])
        return invalid_argument("shapes ", shape_to_string(p0.shape()), " and ", shape_to_string(p.shape()),
                                " differ outside axis ", axis);
    out_shape[a] += p.dim(axis);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor out, Tensor::create(p0.dtype(), out_shape, max_elements));
  const int64_t outer = prod(out_shape, 0, a), inner = prod(out_shape, a + 1, out_shape.size());
  const int64_t out_row = out_shape[a] * inner;
  int64_t at = 0;
  for (const auto& p : parts) {
    const int64_t row = p.dim(axis) * inner;
    OSPREY_RETURN_IF_ERROR(copy_rows(p, 0, row, out, at, out_row, outer, row));
    at += row;
  }
  return out;
}

Result<Tensor> stack(const std::vector<Tensor>& parts, int64_t axis, int64_t max_elements) {
  if (parts.empty()) return invalid_argument("nothing to stack");
  if (axis < 0 || axis > parts[0].rank()) return invalid_argument("stack axis ", axis, " out of range");
  std::vector<Tensor> expanded;
  for (const auto& p : parts) {
    if (p.shape() != parts[0].shape())
      return invalid_argument("cannot stack shapes ", shape_to_string(parts[0].shape()), " and ", shape_to_string(p.shape()));
    Shape s = p.shape();
    s.insert(s.begin() + axis, 1);
    expanded.push_back(p.reshaped(s));
  }
  return concat(expanded, axis, max_elements);
}

Result<std::vector<Tensor>> split(const Tensor& t, int64_t axis, const std::vector<int64_t>& lengths,
                                  int64_t max_elements) {
  if (axis < 0 || axis >= t.rank()) return invalid_argument("axis ", axis, " out of range for rank ", t.rank());
  int64_t total = 0;
  for (int64_t l : lengths) {
    if (l < 0) return invalid_argument("negative split length ", l);
    total += l;
  }
  if (total != t.dim(axis)) return invalid_argument("split lengths sum to ", total, " but the axis has ", t.dim(axis));
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = prod(t.shape(), 0, a), inner = prod(t.shape(), a + 1, t.shape().size());
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t l : lengths) {
    Shape s = t.shape();
    s[a] = l;
    OSPREY_ASSIGN_OR_RETURN(Tensor p, Tensor::create(t.dtype(), s, max_elements));
    OSPREY_RETURN_IF_ERROR(copy_rows(t, at * inner, t.dim(axis) * inner, p, 0, l * inner, outer, l * inner));
    out.push_back(std::move(p));
    at += l;
  }
  return out;
}

}  // namespace osprey::ref::seq
