// QuantizeLinear (float32 -> uint8/int8), DequantizeLinear (uint8/int8 -> float32),
// DynamicQuantizeLinear and com.osprey QLinearAdd (a QDQ model's residual sums, fused by
// qdq_add_fusion) on the
// vectorized row kernels (row_kernels.h), split across the session's threads. A model
// quantized in the QDQ format (onnxruntime's quantize_static) puts one of each around every
// convolution: on the reference's element loop they took three quarters of a quantized
// MobileNetV2's time. One scale and zero point (per tensor), or per-axis parameters over
// blocks of at least 16 contiguous elements; other forms (per-axis along the last axis, the
// block_size and output_dtype attributes of later opsets, int32 input) go to the reference,
// which is the oracle of the tests and gives the same bits.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

constexpr int64_t kChunk = 8192;  // elements per task
constexpr int64_t kMinBlock = 16;  // the shortest per-axis block taken here

// The scale and zero point layout of input 1 and 2 along x: per tensor (count 1) or per axis
// (count values, each over blocks of `inner` contiguous elements). False: the reference's form.
struct Params {
  int64_t count = 1, inner = 1;
  const float* scale = nullptr;
  std::vector<int32_t> zp;
};

bool read_params(const KernelContext& ctx, const Tensor& x, DType qtype, Params* p) {
  if (!ctx.has_input(1) || !ctx.input_value(1).is_tensor()) return false;
  if (ctx.has_attr("block_size") || ctx.has_attr("output_dtype") || ctx.has_attr("saturate"))
    return false;
  const Tensor& s = ctx.input(1);
  if (s.dtype() != DType::kFloat32) return false;
  if (s.numel() != 1 || s.rank() > 1) {
    if (ctx.opset() < 13 || s.rank() != 1 || x.rank() == 0) return false;
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < 0) axis += x.rank();
    if (axis < 0 || axis >= x.rank() || x.dim(axis) != s.numel()) return false;
    p->count = s.numel();
    for (int64_t d = axis + 1; d < x.rank(); ++d) p->inner *= x.dim(d);
    if (p->inner < kMinBlock) return false;
  }
  p->scale = s.data<float>();
  p->zp.assign(static_cast<size_t>(p->count), 0);
  if (ctx.has_input(2)) {
    if (!ctx.input_value(2).is_tensor()) return false;
    const Tensor& z = ctx.input(2);
    if (z.dtype() != qtype || z.numel() != s.numel() || z.rank() != s.rank()) return false;
    for (int64_t i = 0; i < z.numel(); ++i) p->zp[static_cast<size_t>(i)] = static_cast<int32_t>(z.get_as_int64(i));
  }
  return true;
}

// Runs fn(first, count, parameter index) over x's n elements: per tensor in chunks, per axis
// one block of `inner` elements (or a chunk of one) at a time.
template <class Fn>
void for_blocks(const KernelContext& ctx, const Params& p, int64_t n, Fn&& fn) {
  const int64_t block = p.count == 1 ? n : p.inner;
  const int64_t per_block = (block + kChunk - 1) / kChunk;
  const int64_t blocks = block == 0 ? 0 : n / block;
  ctx.parallel_for(blocks * per_block, kChunk * 2, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t blk = t / per_block, part = t % per_block;
      const int64_t first = blk * block + part * kChunk;
      const int64_t len = std::min(kChunk, block - part * kChunk);
      fn(first, len, p.count == 1 ? 0 : blk % p.count);
    }
  });
}

}  // namespace

Status quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType qtype = ctx.has_input(2) && ctx.input_value(2).is_tensor() ? ctx.input(2).dtype()
                                                                        : DType::kUInt8;
  Params p;
  if (x.dtype() != DType::kFloat32 || (qtype != DType::kUInt8 && qtype != DType::kInt8) ||
      !read_params(ctx, x, qtype, &p))
    return ref::quantize_linear(ctx);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, qtype, x.shape()));
  const bool is_signed = qtype == DType::kInt8;
  const VectorIsa isa = best_vector_isa();
  const float* xp = x.data<float>();
  auto* yp = static_cast<uint8_t*>(y.raw_data());
  for_blocks(ctx, p, x.numel(), [&](int64_t first, int64_t len, int64_t k) {
    quantize_row(isa, xp + first, yp + first, len, p.scale[k], p.zp[static_cast<size_t>(k)], is_signed);
  });
  return Status::Ok();
}

Status dequantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Params p;
  if ((x.dtype() != DType::kUInt8 && x.dtype() != DType::kInt8) || !read_params(ctx, x, x.dtype(), &p))
    return ref::dequantize_linear(ctx);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, x.shape()));
  const bool is_signed = x.dtype() == DType::kInt8;
  const VectorIsa isa = best_vector_isa();
  const auto* xp = static_cast<const uint8_t*>(x.raw_data());
  float* yp = y.data<float>();
  for_blocks(ctx, p, x.numel(), [&](int64_t first, int64_t len, int64_t k) {
    dequantize_row(isa, xp + first, yp + first, len, p.scale[k], p.zp[static_cast<size_t>(k)], is_signed);
  });
  return Status::Ok();
}

// DynamicQuantizeLinear: the range (min_max_row per chunk, then over the chunks), then
// quantize_row with its scale and zero point, computed as the reference computes them; the
// same bits. A dynamically quantized model (onnxruntime's quantize_dynamic) puts one before
// every MatMulInteger.
Status dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!ctx.input_value(0).is_tensor() || x.dtype() != DType::kFloat32) return ref::dynamic_quantize_linear(ctx);
  const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  const VectorIsa isa = best_vector_isa();
  const float* xp = x.data<float>();
  // Each chunk's bounds: on the stack up to kStackChunks chunks (no heap on the run path).
  constexpr int64_t kStackChunks = 256;
  float stack_bounds[2 * kStackChunks];
  std::vector<float> heap_bounds(chunks > kStackChunks ? static_cast<size_t>(2 * chunks) : 0);
  float* lows = chunks > kStackChunks ? heap_bounds.data() : stack_bounds;
  float* highs = lows + chunks;
  ctx.parallel_for(chunks, kChunk * 2, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      min_max_row(isa, xp + c * kChunk, std::min(kChunk, n - c * kChunk), lows + c, highs + c);
  });
  float lo = 0.0f, hi = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) {
    lo = std::min(lo, lows[c]);
    hi = std::max(hi, highs[c]);
  }
  const float scale = (hi - lo) / 255.0f;
  uint8_t zp = 0;
  if (scale > 0 && std::isfinite(scale)) zp = ref::saturate_round<uint8_t>(std::nearbyint(-lo / scale));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kUInt8, x.shape()));
  OSPREY_ASSIGN_OR_RETURN(Tensor ys, ctx.new_output(1, DType::kFloat32, {}));
  OSPREY_ASSIGN_OR_RETURN(Tensor yz, ctx.new_output(2, DType::kUInt8, {}));
  *ys.data<float>() = scale;
  *yz.data<uint8_t>() = zp;
  auto* yp = static_cast<uint8_t*>(y.raw_data());
  if (!(scale > 0)) {  // all zeros (or NaN): every element quantizes to 0, as the reference
    std::fill(yp, yp + n, uint8_t{0});
    return Status::Ok();
  }
  ctx.parallel_for(chunks, kChunk * 2, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      quantize_row(isa, xp + c * kChunk, yp + c * kChunk, std::min(kChunk, n - c * kChunk), scale, zp, false);
  });
  return Status::Ok();
}

// com.osprey QLinearAdd with constant per-tensor parameters, on qlinear_add_row; the
// reference's bits (the same float operations). Other forms go to the reference.
Status qlinear_add(KernelContext& ctx) {
  bool ok = ctx.has_input(0) && ctx.has_input(3) && ctx.input(0).shape() == ctx.input(3).shape();
  for (int i = 0; ok && i < 8; ++i) ok = ctx.has_input(i) && ctx.input_value(i).is_tensor();
  QAddParams p;
  if (ok) {
    const int slots[3][2] = {{1, 2}, {4, 5}, {6, 7}};
    float* scales[3] = {&p.a_scale, &p.b_scale, &p.y_scale};
    int32_t* zps[3] = {&p.a_zero_point, &p.b_zero_point, &p.y_zero_point};
    bool* signs[3] = {&p.a_signed, &p.b_signed, &p.y_signed};
    for (int k = 0; ok && k < 3; ++k) {
      const Tensor& s = ctx.input(slots[k][0]);
      const Tensor& z = ctx.input(slots[k][1]);
      ok = s.dtype() == DType::kFloat32 && s.numel() == 1 && s.rank() <= 1 && z.numel() == 1 && z.rank() <= 1 &&
           (z.dtype() == DType::kUInt8 || z.dtype() == DType::kInt8) &&
           (k == 2 || ctx.input(k * 3).dtype() == z.dtype());
      if (!ok) break;
      *scales[k] = s.data<float>()[0];
      *zps[k] = static_cast<int32_t>(z.get_as_int64(0));
      *signs[k] = z.dtype() == DType::kInt8;
    }
    const std::string act = ctx.attr_string("activation", "");
    ok = ok && (act.empty() || act == "Relu");
    p.relu = act == "Relu";
  }
  if (!ok) return ref::qlinear_add(ctx);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, p.y_signed ? DType::kInt8 : DType::kUInt8, a.shape()));
  const VectorIsa isa = best_vector_isa();
  const auto* ap = static_cast<const uint8_t*>(a.raw_data());
  const auto* bp = static_cast<const uint8_t*>(b.raw_data());
  auto* yp = static_cast<uint8_t*>(y.raw_data());
  const int64_t n = a.numel(), chunks = (n + kChunk - 1) / kChunk;
  ctx.parallel_for(chunks, kChunk * 2, [&](int64_t lo, int64_t hi) {
    const int64_t first = lo * kChunk, last = std::min(n, hi * kChunk);
    qlinear_add_row(isa, ap + first, bp + first, yp + first, last - first, p);
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
