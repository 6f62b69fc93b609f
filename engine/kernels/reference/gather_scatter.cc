// Indexing kernels: Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
// OneHot, NonZero, Unique.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

using namespace tensor_ops;  // NOLINT

namespace {
constexpr int64_t kAnyRank = std::numeric_limits<int64_t>::max();

// Copies all of `src` into a freshly allocated output 0.
Result<Tensor> copy_to_output(KernelContext& ctx, const Tensor& src) {
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, src.dtype(), src.shape()));
  Status s = dispatch_elem(src.dtype(), "copy", [&]<class E>() {
    E::copy_n(y.raw_data(), 0, src.raw_data(), 0, src.numel());
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return y;
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Status parse_reduction(const KernelContext& ctx, Reduction* out) {
  const std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") *out = Reduction::kNone;
  else if (r == "add" && ctx.opset() >= 16) *out = Reduction::kAdd;
  else if (r == "mul" && ctx.opset() >= 16) *out = Reduction::kMul;
  else if (r == "max" && ctx.opset() >= 18) *out = Reduction::kMax;
  else if (r == "min" && ctx.opset() >= 18) *out = Reduction::kMin;
  else return invalid_argument("attribute 'reduction' has unsupported value '", r, "'");
  return Status::Ok();
}

template <class T>
void reduce_into(T& dst, const T& src, Reduction red) {
  using C = compute_t<T>;
  const C a = static_cast<C>(dst), b = static_cast<C>(src);
  switch (red) {
    case Reduction::kNone: dst = src; return;
    case Reduction::kAdd: dst = cast_to<T>(a + b); return;
    case Reduction::kMul: dst = cast_to<T>(a * b); return;
    case Reduction::kMax: dst = b > a ? src : dst; return;
    case Reduction::kMin: dst = b < a ? src : dst; return;
  }
}

// Applies dst[dst_off[i] + j] (op)= src[i * block + j] for all i, j, in order.
// With Reduction::kNone this is a plain copy and works for every dtype.
Status scatter_blocks(Tensor& dst, const Tensor& src, const std::vector<int64_t>& dst_off,
                      int64_t block, Reduction red, const char* what) {
  if (red == Reduction::kNone) {
    return dispatch_elem(dst.dtype(), what, [&]<class E>() {
      for (size_t i = 0; i < dst_off.size(); ++i)
        E::copy_n(dst.raw_data(), dst_off[i], src.raw_data(), static_cast<int64_t>(i) * block, block);
      return Status::Ok();
    });
  }
  return dispatch<NumericTypes>(dst.dtype(), what, [&]<class T>() {
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    for (size_t i = 0; i < dst_off.size(); ++i)
      for (int64_t j = 0; j < block; ++j)
        reduce_into(d[dst_off[i] + j], s[static_cast<int64_t>(i) * block + j], red);
    return Status::Ok();
  });
}

// Offsets into `data` for GatherElements/ScatterElements: element-wise indices along `axis`.
Status element_offsets(const Tensor& data, const Tensor& indices, int64_t axis,
                       std::vector<int64_t>* offs) {
  OSPREY_RETURN_IF_ERROR(require_index_dtype(indices, "indices"));
  if (indices.rank() != data.rank())
    return invalid_argument("input 'indices' has rank ", indices.rank(), ", data has rank ",
                            data.rank());
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != axis && indices.dim(d) > data.dim(d))
      return invalid_argument("input 'indices' shape ", shape_to_string(indices.shape()),
                              " exceeds data shape ", shape_to_string(data.shape()), " on axis ", d);
  auto strides = strides_of(data.shape());
  const int64_t axis_stride = strides[static_cast<size_t>(axis)];
  const int64_t dim = data.dim(axis);
  strides[static_cast<size_t>(axis)] = 0;
  offs->resize(static_cast<size_t>(indices.numel()));
  StridedIter it(indices.shape(), {strides});
  for (int64_t i = 0; i < indices.numel(); ++i, it.next()) {
    int64_t v = 0;
    OSPREY_RETURN_IF_ERROR(wrap_index(index_at(indices, i), dim, "'indices'", &v));
    (*offs)[static_cast<size_t>(i)] = it.offset(0) + v * axis_stride;
  }
  return Status::Ok();
}

// Offsets of the slices that GatherND/ScatterND address: indices[..., k] pick positions in
// data dims [b, b+k) within batch entry `batch` (b = batch_dims).
Status nd_offsets(const Tensor& data, const Tensor& indices, int64_t b,
                  std::vector<int64_t>* offs, int64_t* slice) {
  OSPREY_RETURN_IF_ERROR(require_index_dtype(indices, "indices"));
  const int64_t r = data.rank(), q = indices.rank();
  if (r < 1 || q < 1) return invalid_argument("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return invalid_argument("attribute 'batch_dims' ", b, " must be in [0, min(rank(data), rank(indices)))");
  for (int64_t d = 0; d < b; ++d)
    if (indices.dim(d) != data.dim(d))
      return invalid_argument("batch dims of indices ", shape_to_string(indices.shape()),
                              " and data ", shape_to_string(data.shape()), " differ");
  const int64_t k = indices.dim(q - 1);
  if (k < 0 || k > r - b)
    return invalid_argument("last dim of indices (", k, ") must be at most rank(data) - batch_dims = ",
                            r - b);
  const Shape& ds = data.shape();
  const auto strides = strides_of(ds);
  const int64_t batches = dims_product(ds, 0, static_cast<size_t>(b));
  const int64_t batch_stride = dims_product(ds, static_cast<size_t>(b), ds.size());
  const int64_t sets = dims_product(indices.shape(), static_cast<size_t>(b), static_cast<size_t>(q - 1));
  *slice = dims_product(ds, static_cast<size_t>(b + k), ds.size());
  offs->assign(static_cast<size_t>(batches * sets), 0);
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t s = 0; s < sets; ++s) {
      const int64_t set = bi * sets + s;
      int64_t off = bi * batch_stride;
      for (int64_t j = 0; j < k; ++j) {
        int64_t v = 0;
        const size_t d = static_cast<size_t>(b + j);
        OSPREY_RETURN_IF_ERROR(wrap_index(index_at(indices, set * k + j), ds[d], "'indices'", &v));
        off += v * strides[d];
      }
      (*offs)[static_cast<size_t>(set)] = off;
    }
  return Status::Ok();
}
}  // namespace

Status gather(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  OSPREY_RETURN_IF_ERROR(require_index_dtype(ind, "indices"));
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  const size_t a = static_cast<size_t>(axis);
  const int64_t dim = x.dim(axis);
  std::vector<int64_t> idx(static_cast<size_t>(ind.numel()));
  for (int64_t i = 0; i < ind.numel(); ++i)
    OSPREY_RETURN_IF_ERROR(wrap_index(index_at(ind, i), dim, "'indices'", &idx[static_cast<size_t>(i)]));
  Shape out(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), ind.shape().begin(), ind.shape().end());
  out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(a) + 1, x.shape().end());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  const int64_t outer = dims_product(x.shape(), 0, a);
  const int64_t inner = dims_product(x.shape(), a + 1, x.shape().size());
  const int64_t n = ind.numel();
  return dispatch_elem(x.dtype(), "Gather", [&]<class E>() {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        E::copy_n(y.raw_data(), (o * n + j) * inner, x.raw_data(),
                  (o * dim + idx[static_cast<size_t>(j)]) * inner, inner);
    return Status::Ok();
  });
}

Status gather_elements(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, kAnyRank));
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  std::vector<int64_t> offs;
  OSPREY_RETURN_IF_ERROR(element_offsets(x, ind, axis, &offs));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), ind.shape()));
  return dispatch_elem(x.dtype(), "GatherElements", [&]<class E>() {
    for (size_t i = 0; i < offs.size(); ++i)
      E::copy(y.raw_data(), static_cast<int64_t>(i), x.raw_data(), offs[i]);
    return Status::Ok();
  });
}

Status gather_nd(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, kAnyRank));
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const int64_t b = ctx.opset() >= 12 ? ctx.attr_int("batch_dims", 0) : 0;
  std::vector<int64_t> offs;
  int64_t slice = 0;
  OSPREY_RETURN_IF_ERROR(nd_offsets(x, ind, b, &offs, &slice));
  const int64_t k = ind.dim(ind.rank() - 1);
  Shape out(ind.shape().begin(), ind.shape().end() - 1);
  out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(b + k), x.shape().end());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  return dispatch_elem(x.dtype(), "GatherND", [&]<class E>() {
    for (size_t i = 0; i < offs.size(); ++i)
      E::copy_n(y.raw_data(), static_cast<int64_t>(i) * slice, x.raw_data(), offs[i], slice);
    return Status::Ok();
  });
}

// ScatterElements, and its deprecated alias Scatter.
Status scatter_elements(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 2, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  if (upd.shape() != ind.shape())
    return invalid_argument("input 'updates' shape ", shape_to_string(upd.shape()),
                            " differs from 'indices' shape ", shape_to_string(ind.shape()));
  Reduction red = Reduction::kNone;
  if (ctx.node().op_type == "ScatterElements") OSPREY_RETURN_IF_ERROR(parse_reduction(ctx, &red));
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  std::vector<int64_t> offs;
  OSPREY_RETURN_IF_ERROR(element_offsets(x, ind, axis, &offs));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, copy_to_output(ctx, x));
  return scatter_blocks(y, upd, offs, 1, red, "ScatterElements");
}

Status scatter_nd(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 2, 0, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  Reduction red = Reduction::kNone;
  OSPREY_RETURN_IF_ERROR(parse_reduction(ctx, &red));
  std::vector<int64_t> offs;
  int64_t slice = 0;
  OSPREY_RETURN_IF_ERROR(nd_offsets(x, ind, 0, &offs, &slice));
  const int64_t k = ind.dim(ind.rank() - 1);
  Shape expect(ind.shape().begin(), ind.shape().end() - 1);
  expect.insert(expect.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(k), x.shape().end());
  if (upd.shape() != expect)
    return invalid_argument("input 'updates' has shape ", shape_to_string(upd.shape()),
                            ", expected ", shape_to_string(expect));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, copy_to_output(ctx, x));
  return scatter_blocks(y, upd, offs, slice, red, "ScatterND");
}

Status one_hot(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 0, 1));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 2, 1, 1));
  const Tensor& ind = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (!dtype_is_integer(ind.dtype()) && !dtype_is_float(ind.dtype()))
    return invalid_argument("input 'indices' must be numeric, got ", dtype_name(ind.dtype()));
  if (!dtype_is_integer(depth_t.dtype()) && !dtype_is_float(depth_t.dtype()))
    return invalid_argument("input 'depth' must be numeric, got ", dtype_name(depth_t.dtype()));
  if (depth_t.numel() != 1) return invalid_argument("input 'depth' must hold one value");
  if (values.numel() != 2) return invalid_argument("input 'values' must hold [off, on]");
  const double depth_d = depth_t.get_as_double(0);
  if (!(depth_d >= 0 && depth_d < 9.0e18))
    return invalid_argument("input 'depth' must be non-negative, got ", depth_d);
  const int64_t depth = depth_t.get_as_int64(0);
  const int64_t r = ind.rank();
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", -1), r + 1, &axis));
  const size_t a = static_cast<size_t>(axis);
  Shape out(ind.shape().begin(), ind.shape().begin() + static_cast<std::ptrdiff_t>(a));
  out.push_back(depth);
  out.insert(out.end(), ind.shape().begin() + static_cast<std::ptrdiff_t>(a), ind.shape().end());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, values.dtype(), out));
  const int64_t outer = dims_product(ind.shape(), 0, a);
  const int64_t inner = dims_product(ind.shape(), a, ind.shape().size());
  const bool negative_ok = ctx.opset() >= 11;
  return dispatch_elem(values.dtype(), "OneHot", [&]<class E>() {
    for (int64_t i = 0; i < y.numel(); ++i) E::copy(y.raw_data(), i, values.raw_data(), 0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t v = ind.get_as_int64(o * inner + j);
        if (v < 0 && negative_ok && v >= -depth) v += depth;
        if (v < 0 || v >= depth) continue;  // out of range: all "off"
        E::copy(y.raw_data(), (o * depth + v) * inner + j, values.raw_data(), 1);
      }
    return Status::Ok();
  });
}

namespace {
template <class T>
bool is_nonzero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) return !v.empty();
  else if constexpr (std::is_same_v<T, bool>) return v;
  else return static_cast<compute_t<T>>(v) != compute_t<T>(0);
}

// Strict weak order with NaNs last and equal to each other.
template <class T>
bool value_less(const T& a, const T& b) {
  if constexpr (is_float_v<T>) {
    const double x = static_cast<compute_t<T>>(a), y = static_cast<compute_t<T>>(b);
    return !std::isnan(x) && (std::isnan(y) || x < y);
  } else {
    return a < b;
  }
}
}  // namespace

Status non_zero(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  return dispatch<AllTypes>(x.dtype(), "NonZero", [&]<class T>() -> Status {
    const T* in = x.data<T>();
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (is_nonzero(in[i])) hits.push_back(i);
    const int64_t nnz = static_cast<int64_t>(hits.size());
    const int64_t coords = std::max<int64_t>(x.rank(), 1);  // a scalar is treated as 1-D
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kInt64, {coords, nnz}));
    int64_t* out = y.data<int64_t>();
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    for (int64_t j = 0; j < nnz; ++j) {
      int64_t flat = hits[static_cast<size_t>(j)];
      for (int64_t d = coords - 1; d >= 0; --d) {
        const int64_t n = shape[static_cast<size_t>(d)];
        out[d * nnz + j] = flat % n;
        flat /= n;
      }
    }
    return Status::Ok();
  });
}

Status unique(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  const bool has_axis = ctx.has_attr("axis");
  int64_t axis = 0;
  if (has_axis) {
    if (x.rank() == 0) return invalid_argument("attribute 'axis' given for a scalar input");
    OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  }
  // Slices along the axis are compared lexicographically; without an axis, elements.
  const Shape shape = has_axis ? x.shape() : Shape{x.numel()};
  const size_t a = static_cast<size_t>(axis);
  const int64_t dim = shape[a];
  const int64_t outer = dims_product(shape, 0, a);
  const int64_t inner = dims_product(shape, a + 1, shape.size());
  return dispatch<AllTypes>(x.dtype(), "Unique", [&]<class T>() -> Status {
    const T* in = x.data<T>();
    // -1, 0, 1 comparison of slices p and q.
    auto compare = [&](int64_t p, int64_t q) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          const T& u = in[(o * dim + p) * inner + j];
          const T& v = in[(o * dim + q) * inner + j];
          if (value_less(u, v)) return -1;
          if (value_less(v, u)) return 1;
        }
      return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(dim));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t p, int64_t q) { return compare(p, q) < 0; });
    // Groups of equal slices, in sorted order; `first` is the first occurrence (stable sort).
    std::vector<int64_t> first, count, group_of(static_cast<size_t>(dim));
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || compare(order[i - 1], order[i]) != 0) {
        first.push_back(order[i]);
        count.push_back(0);
      }
      count.back() += 1;
      group_of[static_cast<size_t>(order[i])] = static_cast<int64_t>(first.size()) - 1;
    }
    const int64_t u = static_cast<int64_t>(first.size());
    // Output position of each group: sorted order, or order of first occurrence.
    std::vector<int64_t> pos(static_cast<size_t>(u));
    std::iota(pos.begin(), pos.end(), int64_t{0});
    if (!sorted) {
      std::vector<int64_t> by_first(pos);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t g, int64_t h) {
        return first[static_cast<size_t>(g)] < first[static_cast<size_t>(h)];
      });
      for (int64_t p = 0; p < u; ++p) pos[static_cast<size_t>(by_first[static_cast<size_t>(p)])] = p;
    }
    Shape out_shape = shape;
    out_shape[a] = u;
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out_shape));
    T* out = y.data<T>();
    std::vector<int64_t> first_out(static_cast<size_t>(u)), count_out(static_cast<size_t>(u));
    for (int64_t g = 0; g < u; ++g) {
      const int64_t p = pos[static_cast<size_t>(g)], src = first[static_cast<size_t>(g)];
      first_out[static_cast<size_t>(p)] = src;
      count_out[static_cast<size_t>(p)] = count[static_cast<size_t>(g)];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j)
          out[(o * u + p) * inner + j] = in[(o * dim + src) * inner + j];
    }
    if (ctx.output_requested(1)) {
      OSPREY_ASSIGN_OR_RETURN(Tensor t, ctx.new_output(1, DType::kInt64, {u}));
      std::copy(first_out.begin(), first_out.end(), t.data<int64_t>());
    }
    if (ctx.output_requested(2)) {
      OSPREY_ASSIGN_OR_RETURN(Tensor t, ctx.new_output(2, DType::kInt64, {dim}));
      for (int64_t i = 0; i < dim; ++i)
        t.data<int64_t>()[i] = pos[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
    }
    if (ctx.output_requested(3)) {
      OSPREY_ASSIGN_OR_RETURN(Tensor t, ctx.new_output(3, DType::kInt64, {u}));
      std::copy(count_out.begin(), count_out.end(), t.data<int64_t>());
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
