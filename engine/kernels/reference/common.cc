#include "kernels/reference/common.h"

#include <algorithm>
#include <limits>

namespace osprey::ref {

Status normalize_axis(int64_t axis, int64_t rank, int64_t* out, const char* what) {
  if (axis < -rank || axis >= rank)
    return invalid_argument(what, " ", axis, " is out of range for rank ", rank);
  *out = axis < 0 ? axis + rank : axis;
  return Status::Ok();
}

Status normalize_axes(std::vector<int64_t>* axes, int64_t rank, const char* what) {
  for (auto& a : *axes) OSPREY_RETURN_IF_ERROR(normalize_axis(a, rank, &a, what));
  std::vector<int64_t> sorted = *axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return invalid_argument(what, " contain a repeated axis");
  return Status::Ok();
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[static_cast<size_t>(i)] = s[static_cast<size_t>(i + 1)] * shape[static_cast<size_t>(i + 1)];
  return s;
}

Status broadcast_shapes(const std::vector<Shape>& shapes, Shape* out) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape r(rank, 1);
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = s[i];
      int64_t& o = r[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const auto& x : shapes) all += shape_to_string(x) + " ";
      return invalid_argument("shapes cannot be broadcast together: ", all);
    }
  }
  *out = std::move(r);
  return Status::Ok();
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const auto in_st = strides_of(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : in_st[i];
  return st;
}

StridedIter::StridedIter(const Shape& shape, std::vector<std::vector<int64_t>> strides)
    : shape_(shape),
      strides_(std::move(strides)),
      index_(shape.size(), 0),
      offsets_(strides_.size(), 0) {}

void StridedIter::next() {
  for (int64_t d = static_cast<int64_t>(shape_.size()) - 1; d >= 0; --d) {
    const size_t du = static_cast<size_t>(d);
    if (++index_[du] < shape_[du]) {
      for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][du];
      return;
    }
    for (size_t k = 0; k < strides_.size(); ++k)
      offsets_[k] -= strides_[k][du] * (shape_[du] - 1);
    index_[du] = 0;
  }
}

Status require_rank(const KernelContext& ctx, int i, int64_t lo, int64_t hi) {
  if (!ctx.has_input(i)) return invalid_argument("input ", i, " is required");
  if (!ctx.input_value(i).is_tensor()) return invalid_argument("input ", i, " must be a tensor");
  const int64_t r = ctx.input(i).rank();
  if (r < lo || r > hi) {
    const std::string want = lo == hi                              ? std::to_string(lo)
                             : hi >= std::numeric_limits<int64_t>::max() ? str_cat("at least ", lo)
                                                                   : str_cat("between ", lo, " and ", hi);
    return invalid_argument("input ", i, " has rank ", r, ", expected ", want);
  }
  return Status::Ok();
}

Status require_same_dtype(const KernelContext& ctx, int a, int b) {
  if (ctx.input(a).dtype() != ctx.input(b).dtype())
    return invalid_argument("inputs ", a, " and ", b, " must have the same type, got ",
                            dtype_name(ctx.input(a).dtype()), " and ",
                            dtype_name(ctx.input(b).dtype()));
  return Status::Ok();
}

}  // namespace osprey::ref
