// Concat of tensors of one fixed-size element type: each input's rows (its slice of every outer
// index) copied with memcpy into an output that is not zero-filled first, the copies split
// across the session's threads. Strings, and every malformed call (its errors), run the
// reference. Why: the reference zero-fills the output and copies on one thread; two
// [1, 128, 80, 80] floats took 1.3x onnxruntime's time at 1 thread and 2.8x at 2.
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/reference/common.h"

namespace osprey {
namespace ref {
Status concat(KernelContext& ctx);
}  // namespace ref

namespace cpu {

Status concat(KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1 || !ctx.has_attr("axis")) return ref::concat(ctx);
  for (int i = 0; i < n; ++i)
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return ref::concat(ctx);
  const Tensor& first = ctx.input(0);
  const int64_t r = first.rank();
  const DType dt = first.dtype();
  int64_t axis = ctx.attr_int("axis", 0);
  if (axis < 0) axis += r;
  if (dt == DType::kString || r < 1 || axis < 0 || axis >= r) return ref::concat(ctx);
  Shape out = first.shape();
  out[static_cast<size_t>(axis)] = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != dt || t.rank() != r) return ref::concat(ctx);
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.dim(d) != first.dim(d)) return ref::concat(ctx);
    out[static_cast<size_t>(axis)] += t.dim(axis);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, dt, out));
  if (y.numel() == 0) return Status::Ok();
  const size_t elem = dtype_size(dt);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < r; ++d) inner *= out[static_cast<size_t>(d)];
  const size_t out_row = static_cast<size_t>(out[static_cast<size_t>(axis)] * inner) * elem;
  // Item (o, i): input i's row o, at its column of the output's row o.
  std::vector<size_t> column(static_cast<size_t>(n) + 1, 0), row(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    row[static_cast<size_t>(i)] = static_cast<size_t>(ctx.input(i).dim(axis) * inner) * elem;
    column[static_cast<size_t>(i) + 1] = column[static_cast<size_t>(i)] + row[static_cast<size_t>(i)];
  }
  char* dst = static_cast<char*>(y.raw_data());
  const int64_t items = outer * n;
  ctx.parallel_for(items, static_cast<int64_t>(out_row / static_cast<size_t>(n)) / 4 + 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / n;
      const size_t i = static_cast<size_t>(k % n);
      if (row[i] == 0) continue;
      std::memcpy(dst + static_cast<size_t>(o) * out_row + column[i],
                  static_cast<const char*>(ctx.input(static_cast<int>(i)).raw_data()) + static_cast<size_t>(o) * row[i],
                  row[i]);
    }
  });
  return Status::Ok();
}

}  // namespace cpu
}  // namespace osprey
