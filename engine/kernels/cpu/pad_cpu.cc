// Pad (opset 11 on, modes constant, reflect and edge, fixed-size element types, no axes input):
// each output row (the last axis) is its source row's contiguous part copied with memcpy and
// the few border elements mapped one by one, into an output that is not zero-filled first, the
// rows split across the session's threads. Everything else (and every malformed call, for its
// error) runs the reference. Why: the reference zero-fills the output and maps every element
// on one thread: [1, 64, 128, 128] padded by 1 took 3.8x onnxruntime's time.
#include <cstring>

#include "kernels/kernel.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey {
namespace ref {
Status pad(KernelContext& ctx);
}  // namespace ref

namespace cpu {

Status pad(KernelContext& ctx) {
  using ref::tensor_ops::pad_source;
  const std::string mode_name = ctx.attr_string("mode", "constant");
  const int mode = mode_name == "constant" ? 0 : mode_name == "reflect" ? 1 : mode_name == "edge" ? 2 : -1;
  if (mode < 0 || ctx.opset() < 11 || ctx.has_input(3) || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      !ctx.has_input(1) || !ctx.input_value(1).is_tensor() || ctx.input(1).dtype() != DType::kInt64)
    return ref::pad(ctx);
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const Tensor& pads = ctx.input(1);
  if (x.dtype() == DType::kString || r < 1 || pads.numel() != 2 * r) return ref::pad(ctx);
  const size_t elem = dtype_size(x.dtype());
  std::vector<unsigned char> value(elem, 0);
  if (ctx.has_input(2)) {
    const Tensor& v = ctx.input(2);
    if (!ctx.input_value(2).is_tensor() || v.dtype() != x.dtype() || v.numel() != 1) return ref::pad(ctx);
    std::memcpy(value.data(), v.raw_data(), elem);
  }
  Shape out(static_cast<size_t>(r));
  std::vector<int64_t> begin(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    const int64_t b = pads.data<int64_t>()[d], e = pads.data<int64_t>()[d + r], n = x.dim(d);
    if (std::abs(b) > (int64_t{1} << 40) || std::abs(e) > (int64_t{1} << 40) || n + b + e < 0 ||
        (mode != 0 && n == 0 && n + b + e > 0))
      return ref::pad(ctx);  // its errors
    begin[static_cast<size_t>(d)] = b;
    out[static_cast<size_t>(d)] = n + b + e;
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  // Per axis, each output coordinate's source offset in bytes (-1: the constant).
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
  int64_t stride = static_cast<int64_t>(elem);
  for (int64_t d = r - 1; d >= 0; --d) {
    auto& m = src[static_cast<size_t>(d)];
    m.resize(static_cast<size_t>(out[static_cast<size_t>(d)]));
    for (int64_t o = 0; o < out[static_cast<size_t>(d)]; ++o) {
      const int64_t i = pad_source(o, begin[static_cast<size_t>(d)], x.dim(d), mode);
      m[static_cast<size_t>(o)] = i < 0 ? -1 : i * stride;
    }
    stride *= x.dim(d);
  }
  const int64_t inner = out.back(), rows = y.numel() / inner, n_last = x.dim(r - 1);
  // The last axis's contiguous part: outputs [a, b) read inputs [a - begin, b - begin).
  const int64_t a = std::clamp<int64_t>(begin.back(), 0, inner);
  const int64_t b = std::clamp<int64_t>(begin.back() + n_last, a, inner);
  const auto* in = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(y.raw_data());
  const auto& last = src.back();
  ctx.parallel_for(rows, inner * static_cast<int64_t>(elem) / 8 + 1, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      unsigned char* o = dst + static_cast<size_t>(row * inner) * elem;
      int64_t off = 0, rest = row;
      bool constant_row = false;
      for (int64_t d = r - 2; d >= 0; --d) {
        const int64_t od = rest % out[static_cast<size_t>(d)];
        rest /= out[static_cast<size_t>(d)];
        const int64_t s = src[static_cast<size_t>(d)][static_cast<size_t>(od)];
        if (s < 0) constant_row = true;
        off += s;
      }
      for (int64_t j = 0; j < inner; ++j) {
        if (!constant_row && j == a && b > a) {
          std::memcpy(o + static_cast<size_t>(a) * elem, in + off + last[static_cast<size_t>(a)],
                      static_cast<size_t>(b - a) * elem);
          j = b - 1;
          continue;
        }
        const int64_t s = last[static_cast<size_t>(j)];
        std::memcpy(o + static_cast<size_t>(j) * elem, constant_row || s < 0 ? value.data() : in + off + s, elem);
      }
    }
  });
  return Status::Ok();
}

}  // namespace cpu
}  // namespace osprey
