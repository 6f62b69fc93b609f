// Sigmoid (float32) on the vectorized row kernel (row_kernels.h), split across the session's
// threads: PP-OCR's text detector ends in a Sigmoid over its 640x640 map, which the reference
// (std::exp per element) took 1.5 ms for. The reference is the oracle of the tests.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::cpu {

Status sigmoid(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      ctx.input(0).dtype() != DType::kFloat32)
    return ref::unary_sigmoid(ctx);  // its errors
  const Tensor& x = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, x.shape()));
  constexpr int64_t kChunk = 4096;  // elements per task
  const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  const VectorIsa isa = best_vector_isa();
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  ctx.parallel_for(chunks, kChunk * 8, [&](int64_t b, int64_t e) {
    const int64_t first = b * kChunk, last = std::min(n, e * kChunk);
    sigmoid(isa, xp + first, yp + first, last - first);
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
