// Layout kernels: Transpose, Concat, Split, Tile, Pad, DepthToSpace, SpaceToDepth, Trilu.
#include <cstdlib>
#include <limits>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

using namespace tensor_ops;  // NOLINT

namespace {
constexpr int64_t kAnyRank = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxDim = std::numeric_limits<int64_t>::max();

// Writes `src` viewed with shape `view` (same element count) transposed by `perm` into dst.
Status permute_into(const Tensor& src, const Shape& view, const std::vector<int64_t>& perm,
                    Tensor& dst) {
  const auto in_strides = strides_of(view);
  Shape out_shape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_shape[i] = view[static_cast<size_t>(perm[i])];
    strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  return dispatch_elem(src.dtype(), "Transpose", [&]<class E>() {
    copy_strided<E>(dst.raw_data(), src.raw_data(), 0, out_shape, strides);
    return Status::Ok();
  });
}
}  // namespace

Result<Tensor> transposed(const Tensor& x, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = x.shape()[static_cast<size_t>(perm[i])];
  Tensor y(x.dtype(), out);
  OSPREY_RETURN_IF_ERROR(permute_into(x, x.shape(), perm, y));
  return y;
}

Status transpose_perm(const KernelContext& ctx, int64_t r, std::vector<int64_t>* out) {
  std::vector<int64_t> perm;
  if (ctx.has_attr("perm")) {
    perm = ctx.attr_ints("perm");
    if (static_cast<int64_t>(perm.size()) != r)
      return invalid_argument("attribute 'perm' has ", perm.size(), " entries for rank ", r);
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= r || seen[static_cast<size_t>(p)])
        return invalid_argument("attribute 'perm' is not a permutation of 0..", r - 1);
      seen[static_cast<size_t>(p)] = true;
    }
  } else {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  *out = std::move(perm);
  return Status::Ok();
}

Status transpose(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<int64_t> perm;
  OSPREY_RETURN_IF_ERROR(transpose_perm(ctx, r, &perm));
  Shape out(static_cast<size_t>(r));
  for (size_t i = 0; i < out.size(); ++i) out[i] = x.shape()[static_cast<size_t>(perm[i])];
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  return permute_into(x, x.shape(), perm, y);
}

Status concat(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return invalid_argument("Concat needs at least one input");
  for (int i = 0; i < n; ++i) {
    OSPREY_RETURN_IF_ERROR(require_rank(ctx, i, 1, kAnyRank));
    OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
  }
  const Tensor& first = ctx.input(0);
  const int64_t r = first.rank();
  if (ctx.opset() >= 4 && !ctx.has_attr("axis"))
    return invalid_argument("attribute 'axis' is required");
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 1), r, &axis));
  Shape out = first.shape();
  out[static_cast<size_t>(axis)] = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() != r)
      return invalid_argument("input ", i, " has rank ", t.rank(), ", input 0 has rank ", r);
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.dim(d) != first.dim(d))
        return invalid_argument("input ", i, " has shape ", shape_to_string(t.shape()),
                                ", incompatible with ", shape_to_string(first.shape()),
                                " outside axis ", axis);
    out[static_cast<size_t>(axis)] += t.dim(axis);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, first.dtype(), out));
  const int64_t outer = dims_product(out, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(out, static_cast<size_t>(axis) + 1, out.size());
  const int64_t out_row = out[static_cast<size_t>(axis)] * inner;
  return dispatch_elem(first.dtype(), "Concat", [&]<class E>() {
    int64_t col = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      const int64_t row = t.dim(axis) * inner;
      for (int64_t o = 0; o < outer; ++o) E::copy_n(y.raw_data(), o * out_row + col, t.raw_data(), o * row, row);
      col += row;
    }
    return Status::Ok();
  });
}

Status split(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  const int64_t dim = x.dim(axis);
  const int outputs = ctx.num_outputs();
  if (outputs < 1) return invalid_argument("Split needs at least one output");
  std::vector<int64_t> parts;
  bool given = false;
  if ((ctx.opset() >= 13 || ctx.opset() == 1) && ctx.has_input(1)) {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "split", &parts));
    given = true;
  } else if (ctx.opset() < 13 && ctx.has_attr("split")) {
    parts = ctx.attr_ints("split");
    given = true;
  }
  if (given) {
    if (static_cast<int>(parts.size()) != outputs)
      return invalid_argument("'split' has ", parts.size(), " entries for ", outputs, " outputs");
    int64_t total = 0;
    for (int64_t p : parts) {
      if (p < 0) return invalid_argument("'split' has negative entry ", p);
      total += p;
      if (total > dim) break;
    }
    if (total != dim)
      return invalid_argument("'split' entries do not sum to the axis dimension ", dim);
  } else {
    const int64_t num = ctx.opset() >= 18 && ctx.has_attr("num_outputs")
                            ? ctx.attr_int("num_outputs", outputs)
                            : outputs;
    if (num != outputs)
      return invalid_argument("attribute 'num_outputs' ", num, " differs from the ", outputs,
                              " outputs");
    if (ctx.opset() >= 18) {  // the last chunk may be smaller
      const int64_t chunk = (dim + num - 1) / num;
      for (int64_t i = 0; i < num; ++i)
        parts.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (dim % num != 0)
        return invalid_argument("axis dimension ", dim, " is not divisible into ", num, " outputs");
      parts.assign(static_cast<size_t>(num), dim / num);
    }
  }
  const int64_t outer = dims_product(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  const int64_t in_row = dim * inner;
  return dispatch_elem(x.dtype(), "Split", [&]<class E>() -> Status {
    int64_t col = 0;
    for (int i = 0; i < outputs; ++i) {
      Shape s = x.shape();
      s[static_cast<size_t>(axis)] = parts[static_cast<size_t>(i)];
      const int64_t row = parts[static_cast<size_t>(i)] * inner;
      if (ctx.output_requested(i)) {
        // Every element is copied in (strings assigned over their empty defaults).
        OSPREY_ASSIGN_OR_RETURN(Tensor y, x.dtype() == DType::kString ? ctx.new_output(i, x.dtype(), s)
                                                                      : ctx.new_output_uninitialized(i, x.dtype(), s));
        for (int64_t o = 0; o < outer; ++o) E::copy_n(y.raw_data(), o * row, x.raw_data(), o * in_row + col, row);
      }
      col += row;
    }
    return Status::Ok();
  });
}

Status tile(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<int64_t> reps;
  if (ctx.opset() < 6) {  // Tile-1: scalar `tiles` repeats along scalar `axis`
    int64_t tiles = 0, axis = 0;
    OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 1, "tiles", &tiles));
    OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 2, "axis", &axis));
    OSPREY_RETURN_IF_ERROR(normalize_axis(axis, r, &axis));
    reps.assign(static_cast<size_t>(r), 1);
    if (r > 0) reps[static_cast<size_t>(axis)] = tiles;
  } else {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "repeats", &reps));
  }
  if (static_cast<int64_t>(reps.size()) != r)
    return invalid_argument("'repeats' has ", reps.size(), " entries for rank ", r);
  Shape out(static_cast<size_t>(r));
  for (size_t i = 0; i < out.size(); ++i) {
    if (reps[i] < 0) return invalid_argument("'repeats' has negative entry ", reps[i]);
    if (x.shape()[i] != 0 && reps[i] > std::numeric_limits<int64_t>::max() / x.shape()[i])
      return invalid_argument("tiled shape overflows");
    out[i] = x.shape()[i] * reps[i];
  }
  // Every element is written below (strings assigned over their empty defaults).
  OSPREY_ASSIGN_OR_RETURN(Tensor y, x.dtype() == DType::kString ? ctx.new_output(0, x.dtype(), out)
                                                                : ctx.new_output_uninitialized(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  // View the output as [rep0, d0, rep1, d1, ...] and read the input with stride 0 on reps.
  Shape view;
  std::vector<int64_t> strides;
  const auto in_strides = strides_of(x.shape());
  for (size_t i = 0; i < out.size(); ++i) {
    view.push_back(reps[i]);
    strides.push_back(0);
    view.push_back(x.shape()[i]);
    strides.push_back(in_strides[i]);
  }
  return dispatch_elem(x.dtype(), "Tile", [&]<class E>() {
    copy_strided<E>(y.raw_data(), x.raw_data(), 0, view, strides);
    return Status::Ok();
  });
}


Status pad(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const std::string mode_name = ctx.attr_string("mode", "constant");
  int mode;
  if (mode_name == "constant") mode = 0;
  else if (mode_name == "reflect") mode = 1;
  else if (mode_name == "edge") mode = 2;
  else if (mode_name == "wrap" && ctx.opset() >= 19) mode = 3;
  else return invalid_argument("attribute 'mode' has unsupported value '", mode_name, "'");

  std::vector<int64_t> pads, axes;
  if (ctx.opset() < 11) {
    const char* name = ctx.opset() < 2 ? "paddings" : "pads";
    if (!ctx.has_attr(name)) return invalid_argument("attribute '", name, "' is required");
    pads = ctx.attr_ints(name);
  } else {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "pads", &pads));
    if (ctx.opset() >= 18 && ctx.has_input(3)) {
      OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 3, "axes", &axes));
      OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, r));
    }
  }
  if (axes.empty() && !(ctx.opset() >= 18 && ctx.has_input(3)))
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    return invalid_argument("'pads' has ", pads.size(), " entries, expected ", 2 * axes.size());
  std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    begin[static_cast<size_t>(axes[k])] = pads[k];
    end[static_cast<size_t>(axes[k])] = pads[k + axes.size()];
  }
  Shape out(static_cast<size_t>(r));
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t n = x.shape()[d];
    if (std::abs(begin[d]) > (int64_t{1} << 40) || std::abs(end[d]) > (int64_t{1} << 40))
      return invalid_argument("'pads' value is too large");
    out[d] = n + begin[d] + end[d];
    if (out[d] < 0) return invalid_argument("'pads' remove more than the size of axis ", d);
    if (mode != 0 && n == 0 && out[d] > 0)
      return invalid_argument("cannot pad an empty axis ", d, " in mode '", mode_name, "'");
  }
  const bool value_input = ctx.opset() >= 11 && ctx.has_input(2);
  if (value_input) {
    OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
    if (ctx.input(2).numel() != 1)
      return invalid_argument("input 'constant_value' must hold one value");
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  // Per-axis source coordinates, scaled by the input strides (-1: constant). Each axis is
  // at most y.numel() long, which the element limit has bounded.
  const auto in_strides = strides_of(x.shape());
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
  for (size_t d = 0; d < src.size(); ++d) {
    src[d].resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) {
      const int64_t i = pad_source(o, begin[d], x.shape()[d], mode);
      src[d][static_cast<size_t>(o)] = i < 0 ? -1 : i * in_strides[d];
    }
  }
  const float value_attr = ctx.opset() < 11 ? ctx.attr_float("value", 0.0f) : 0.0f;
  return dispatch<AllTypes>(x.dtype(), "Pad", [&]<class T>() -> Status {
    T value{};
    if (value_input) {
      value = ctx.input(2).data<T>()[0];
    } else if constexpr (!std::is_same_v<T, std::string>) {
      value = cast_to<T>(value_attr);
    }
    const T* in = x.data<T>();
    T* o = y.data<T>();
    const int64_t total = y.numel();
    if (r == 0) {
      o[0] = in[0];
      return Status::Ok();
    }
    const size_t last = static_cast<size_t>(r - 1);
    const int64_t inner = out[last];
    const auto& src_last = src[last];
    std::vector<int64_t> idx(last, 0);
    for (int64_t base = 0; base < total; base += inner) {
      int64_t off = 0;
      bool constant_row = false;
      for (size_t d = 0; d < last; ++d) {
        const int64_t s = src[d][static_cast<size_t>(idx[d])];
        if (s < 0) constant_row = true;
        off += s;
      }
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t s = src_last[static_cast<size_t>(j)];
        o[base + j] = (constant_row || s < 0) ? value : in[off + s];
      }
      for (size_t d = last; d-- > 0;) {
        if (++idx[d] < out[d]) break;
        idx[d] = 0;
      }
    }
    return Status::Ok();
  });
}

Status depth_to_space(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 20))
    return invalid_argument("attribute 'blocksize' must be positive, got ", b);
  const std::string mode = ctx.opset() >= 11 ? ctx.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD")
    return invalid_argument("attribute 'mode' must be DCR or CRD, got '", mode, "'");
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (h > kMaxDim / b || w > kMaxDim / b)
    return invalid_argument("output spatial dims overflow for blocksize ", b);
  if (c % (b * b) != 0)
    return invalid_argument("channels ", c, " are not divisible by blocksize^2 = ", b * b);
  const int64_t c2 = c / (b * b);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), {n, c2, h * b, w * b}));
  if (mode == "DCR") return permute_into(x, {n, b, b, c2, h, w}, {0, 3, 4, 1, 5, 2}, y);
  return permute_into(x, {n, c2, b, b, h, w}, {0, 1, 4, 2, 5, 3}, y);
}

Status space_to_depth(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 20))
    return invalid_argument("attribute 'blocksize' must be positive, got ", b);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (h % b != 0 || w % b != 0)
    return invalid_argument("spatial dims ", h, "x", w, " are not divisible by blocksize ", b);
  if (c > kMaxDim / (b * b)) return invalid_argument("output channels overflow for blocksize ", b);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), {n, c * b * b, h / b, w / b}));
  return permute_into(x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, y);
}

Status trilu(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, kAnyRank));
  const Tensor& x = ctx.input(0);
  int64_t k = 0;
  if (ctx.has_input(1)) OSPREY_RETURN_IF_ERROR(read_int_scalar(ctx, 1, "k", &k));
  const bool upper = ctx.attr_int("upper", 1) != 0;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  // Clamp k so that j - i comparisons cannot overflow.
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  return dispatch_elem(x.dtype(), "Trilu", [&]<class E>() {
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i) {
        // Kept columns: upper keeps j >= i + k, lower keeps j <= i + k.
        const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        const int64_t row = (m * rows + i) * cols;
        E::copy_n(y.raw_data(), row + lo, x.raw_data(), row + lo, hi - lo);
      }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
