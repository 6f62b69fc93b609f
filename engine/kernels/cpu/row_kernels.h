// Vectorized float32 row kernels for the ops oneDNN does not cover well here (LayerNorm,
// ReduceSum/ReduceMean): plain loops shaped for the vectorizer (fixed-width lane blocks, sums
// in double lanes), compiled three times (AVX-512, AVX2+FMA, and generic x86-64) and chosen at
// run time from the CPU's features. The reference kernels are their oracles in the tests.
#pragma once

#include <cstdint>

namespace osprey::cpu {

enum class VectorIsa { generic, avx2, avx512 };

const char* vector_isa_name(VectorIsa isa);
bool vector_isa_supported(VectorIsa isa);  // the CPU (and OS) can run this variant
VectorIsa best_vector_isa();               // the widest supported variant, read once

// Normalizes `rows` rows of `m` contiguous floats: y = (x - mean) / sqrt(var + eps) * scale
// (+ bias, when not null); mean and (biased) variance are summed in double. x and y may alias.
void layer_norm_rows(VectorIsa isa, const float* x, float* y, int64_t rows, int64_t m,
                     const float* scale, const float* bias, double eps);

// Views x as [outer, r, inner] and writes y[o, i] = mult * sum over k < r of x[o, k, i] for
// o in [o_begin, o_end) and every i, summed in double (mult = 1 for a sum, 1/r for a mean).
void sum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t o_begin, int64_t o_end,
                     int64_t r, int64_t inner, double mult);

}  // namespace osprey::cpu
