// Cast between float32 and float16 (a model with half-precision inputs or outputs, or halves
// stored between its layers) on the CPU's F16C conversions, eight values an instruction,
// chunks across the threads; the reference's element loop (round to odd through double) took
// 4.9 ms on [1, 128, 80, 80], onnxruntime 0.06. The results are the reference's bits: F16C
// rounds to nearest even as it does, and the NaN lanes are rewritten to its NaNs (float to
// half: the canonical quiet NaN 0x7e00 with the sign; half to float: the payload shifted up,
// a signalling NaN left signalling). Bool, int64 and int32 to float32 (masks and ids) are plain
// conversion loops (a bool mask [1, 12, 128, 128]: 0.18 ms on the reference, onnxruntime 0.03).
// Other casts, and CPUs without F16C, run the reference.
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>

#include "kernels/reference/common.h"

namespace osprey::ref {
Status cast(KernelContext& ctx);  // reference/cast.cc
}  // namespace osprey::ref

namespace osprey::cpu {
namespace {

// F16C from CPUID leaf 1 (ECX bit 29; clang's __builtin_cpu_supports does not name it), with
// AVX2 (which also says the OS saves the YMM registers).
bool f16c_supported() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
  }();
  return ok;
}

uint16_t half_of(float f) { return Float16::from_float(f); }
float float_of(uint16_t h) { return Float16::to_float(h); }

__attribute__((target("avx2,f16c"))) void to_half(const float* x, uint16_t* y, int64_t n) {
  int64_t k = 0;
  const __m128i abs_mask = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
  const __m128i qnan = _mm_set1_epi16(0x7e00), sign = _mm_set1_epi16(static_cast<int16_t>(0x8000));
  for (; k + 8 <= n; k += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, abs_mask), inf);  // |h| above infinity's
    h = _mm_blendv_epi8(h, _mm_or_si128(_mm_and_si128(h, sign), qnan), nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + k), h);
  }
  for (; k < n; ++k) y[k] = half_of(x[k]);
}

__attribute__((target("avx2,f16c"))) void to_float(const uint16_t* x, float* y, int64_t n) {
  int64_t k = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fff), inf = _mm256_set1_epi32(0x7c00);
  for (; k + 8 <= n; k += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k));
    __m256i f = _mm256_castps_si256(_mm256_cvtph_ps(h));
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, abs_mask), inf);
    // sign << 16 | exponent all ones | mantissa << 13, as the reference widens a NaN
    const __m256i ref_nan = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16),
                        _mm256_set1_epi32(0x7f800000)),
        _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3ff)), 13));
    f = _mm256_blendv_epi8(f, ref_nan, nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + k), f);
  }
  for (; k < n; ++k) y[k] = float_of(x[k]);
}

}  // namespace

Status cast(KernelContext& ctx) {
  const ir::Attribute* to_attr = ctx.node().find_attribute("to");
  if (!f16c_supported() || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() || !to_attr ||
      to_attr->type != ir::Attribute::Type::kInt)
    return ref::cast(ctx);  // and its errors
  const Tensor& x = ctx.input(0);
  const DType from = x.dtype(), to = static_cast<DType>(to_attr->i);
  const bool down = from == DType::kFloat32 && to == DType::kFloat16;
  const bool up = from == DType::kFloat16 && to == DType::kFloat32;
  // Masks and ids made float (an attention mask, position ids): plain conversions, as the
  // reference's static_cast.
  const bool widen = to == DType::kFloat32 && (from == DType::kBool || from == DType::kInt64 || from == DType::kInt32);
  if (!down && !up && !widen) return ref::cast(ctx);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, to, x.shape()));
  constexpr int64_t kChunk = 8192;  // elements per task
  const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  ctx.parallel_for(chunks, kChunk * 2, [&](int64_t b, int64_t e) {
    const int64_t first = b * kChunk, count = std::min(n, e * kChunk) - first;
    float* yf = y.data<float>() + first;
    if (down) {
      to_half(x.data<float>() + first, static_cast<uint16_t*>(y.raw_data()) + first, count);
    } else if (up) {
      to_float(static_cast<const uint16_t*>(x.raw_data()) + first, yf, count);
    } else if (from == DType::kBool) {
      const uint8_t* xb = static_cast<const uint8_t*>(x.raw_data()) + first;  // bytes, no branch
      for (int64_t k = 0; k < count; ++k) yf[k] = static_cast<float>(xb[k] != 0);
    } else if (from == DType::kInt64) {
      const int64_t* xi = x.data<int64_t>() + first;
      for (int64_t k = 0; k < count; ++k) yf[k] = static_cast<float>(xi[k]);
    } else {
      const int32_t* xi = x.data<int32_t>() + first;
      for (int64_t k = 0; k < count; ++k) yf[k] = static_cast<float>(xi[k]);
    }
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
