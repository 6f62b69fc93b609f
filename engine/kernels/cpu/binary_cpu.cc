// Add, Sub, Mul and Div over two float32 inputs (opset 7 on: numpy broadcasting), and Max, Min,
// Sum and Mean over two or more (opset 8 on, folded input by input as the reference folds them),
// on the
// vectorized binary row kernel, split across the session's threads. The broadcast is first
// reduced to as few dimensions as it has: size-1 output dimensions are dropped and neighbours in
// which each input is either whole or broadcast alike are merged, so that a per-channel bias on
// NCHW ([1, 256, 40, 40] + [1, 256, 1, 1]) runs 256 rows of 1600 against one value each, not
// 10240 rows of 40, and two same-shape tensors run as one row split into pieces. Each element
// is the reference's float operation, so the results are bit for bit the reference's (its
// oracle in the tests); other element types, the legacy `broadcast` attribute (before opset 7)
// and shapes that do not broadcast (its errors) go to the reference kernel.
#include <vector>

#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::cpu {
namespace {

// Elements per unit of work when rows are long: rows split into pieces of this many.
constexpr int64_t kPiece = 8192;

// The broadcast in its fewest dimensions: outer dimensions (outermost first) with each input's
// stride in them (0 where broadcast), then one run of `len` elements along which each input is
// whole (a_vec, b_vec) or one value.
struct Layout {
  std::vector<int64_t> outer, sa, sb;
  int64_t len = 1;
  bool a_vec = true, b_vec = true;
};

Layout merge_dims(const Shape& a, const Shape& b, const Shape& out) {
  const size_t rank = out.size();
  auto dim_of = [rank](const Shape& s, size_t d) {
    const size_t lead = rank - s.size();
    return d < lead ? int64_t{1} : s[d - lead];
  };
  std::vector<int64_t> size;
  std::vector<int> kind;  // bit 0: a whole, bit 1: b whole
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int k = (dim_of(a, d) == out[d] ? 1 : 0) | (dim_of(b, d) == out[d] ? 2 : 0);
    if (!kind.empty() && kind.back() == k) {
      size.back() *= out[d];
    } else {
      size.push_back(out[d]);
      kind.push_back(k);
    }
  }
  Layout l;
  if (size.empty()) return l;  // one element
  l.len = size.back();
  l.a_vec = kind.back() & 1;
  l.b_vec = kind.back() & 2;
  int64_t ra = l.a_vec ? l.len : 1, rb = l.b_vec ? l.len : 1;
  for (size_t d = size.size() - 1; d-- > 0;) {
    l.outer.insert(l.outer.begin(), size[d]);
    l.sa.insert(l.sa.begin(), kind[d] & 1 ? ra : 0);
    l.sb.insert(l.sb.begin(), kind[d] & 2 ? rb : 0);
    if (kind[d] & 1) ra *= size[d];
    if (kind[d] & 2) rb *= size[d];
  }
  return l;
}

// y = a op b, both broadcast to y's shape (non-empty).
void apply(const KernelContext& ctx, BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const Layout l = merge_dims(a.shape(), b.shape(), y.shape());
  const int64_t rows = y.numel() / l.len;
  const int64_t pieces = (l.len + kPiece - 1) / kPiece;  // per row
  const int64_t piece = (l.len + pieces - 1) / pieces;
  const VectorIsa isa = best_vector_isa();
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* yp = y.data<float>();
  const size_t nd = l.outer.size();
  ctx.parallel_for(rows * pieces, piece, [&](int64_t u0, int64_t u1) {
    // The row of unit u0 as an index into the outer dimensions, then stepped row by row.
    std::vector<int64_t> idx(nd);
    int64_t row = u0 / pieces, oa = 0, ob = 0;
    for (size_t d = nd, rest = static_cast<size_t>(row); d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest) % l.outer[d];
      rest /= static_cast<size_t>(l.outer[d]);
      oa += idx[d] * l.sa[d];
      ob += idx[d] * l.sb[d];
    }
    for (int64_t u = u0; u < u1; ++row) {
      const int64_t row_end = std::min(u1, (row + 1) * pieces);
      const int64_t first = (u - row * pieces) * piece;
      const int64_t last = std::min(l.len, (row_end - row * pieces) * piece);
      binary_row(isa, op, ap + oa + (l.a_vec ? first : 0), l.a_vec, bp + ob + (l.b_vec ? first : 0), l.b_vec,
                 yp + row * l.len + first, last - first);
      u = row_end;
      for (size_t d = nd; d-- > 0;) {  // the next row
        oa += l.sa[d];
        ob += l.sb[d];
        if (++idx[d] < l.outer[d]) break;
        oa -= l.sa[d] * l.outer[d];
        ob -= l.sb[d] * l.outer[d];
        idx[d] = 0;
      }
    }
  });
}

Status run(KernelContext& ctx, BinaryOp op, Status (*reference)(KernelContext&)) {
  if (ctx.num_inputs() != 2 || !ctx.has_input(0) || !ctx.has_input(1) ||
      !ctx.input_value(0).is_tensor() || !ctx.input_value(1).is_tensor())
    return reference(ctx);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32) return reference(ctx);
  Shape out;
  if (!ref::broadcast_shapes({a.shape(), b.shape()}, &out).ok()) return reference(ctx);
  const int over = a.shape() == out && ctx.input_donatable(0)   ? 0
                   : b.shape() == out && ctx.input_donatable(1) ? 1
                                                                : -1;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, over >= 0 ? ctx.new_output_over_input(0, over, DType::kFloat32, out)
                                              : ctx.new_output_uninitialized(0, DType::kFloat32, out));
  if (y.numel() > 0) apply(ctx, op, a, b, y);
  return Status::Ok();
}

// Sum, Mean, Max and Min of two or more float32 inputs, folded as the reference folds them:
// y = in0 op in1, then y = y op in_i (each broadcast to the output), Mean's sum then divided
// by the count, each step the reference's float operation.
Status fold(KernelContext& ctx, BinaryOp op, bool mean, Status (*reference)(KernelContext&)) {
  const int n = ctx.num_inputs();
  if (n < 2) return reference(ctx);
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32)
      return reference(ctx);
    shapes.push_back(ctx.input(i).shape());
  }
  Shape out;
  if (!ref::broadcast_shapes(shapes, &out).ok()) return reference(ctx);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, out));
  if (y.numel() == 0) return Status::Ok();
  apply(ctx, op, ctx.input(0), ctx.input(1), y);
  for (int i = 2; i < n; ++i) apply(ctx, op, y, ctx.input(i), y);
  if (mean) apply(ctx, BinaryOp::kDiv, y, Tensor::scalar(static_cast<float>(n)), y);
  return Status::Ok();
}

}  // namespace

Status add(KernelContext& ctx) { return run(ctx, BinaryOp::kAdd, &ref::binary_add); }
Status sub(KernelContext& ctx) { return run(ctx, BinaryOp::kSub, &ref::binary_sub); }
Status mul(KernelContext& ctx) { return run(ctx, BinaryOp::kMul, &ref::binary_mul); }
Status div(KernelContext& ctx) { return run(ctx, BinaryOp::kDiv, &ref::binary_div); }
Status max(KernelContext& ctx) { return fold(ctx, BinaryOp::kMax, false, &ref::variadic_max); }
Status min(KernelContext& ctx) { return fold(ctx, BinaryOp::kMin, false, &ref::variadic_min); }
Status sum(KernelContext& ctx) { return fold(ctx, BinaryOp::kAdd, false, &ref::variadic_sum); }
Status mean(KernelContext& ctx) { return fold(ctx, BinaryOp::kAdd, true, &ref::variadic_mean); }

}  // namespace osprey::cpu
