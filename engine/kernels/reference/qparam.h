// The per-tensor quantization parameters of the QOperator format's ops (a scale and an
// optional zero point per quantized tensor) and the byte access they share. qparam.cc.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {

inline bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// Element i of a uint8 or int8 tensor.
inline int32_t byte_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? static_cast<int32_t>(t.data<int8_t>()[i])
                                   : static_cast<int32_t>(t.data<uint8_t>()[i]);
}

// Stores v, already in the tensor's range.
inline void store_byte(Tensor& t, int64_t i, int32_t v) {
  if (t.dtype() == DType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>(v);
  else t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
}

struct QParam {
  float scale = 1.0f;
  int32_t zp = 0;
  DType type = DType::kUInt8;

  float dequantize(int32_t v) const { return static_cast<float>(v - zp) * scale; }
  // The byte quantizing v as QuantizeLinear rounds it: to nearest, ties to even, saturated.
  int32_t quantize(float v) const { return saturated(static_cast<double>(std::nearbyint(v / scale)) + zp); }
  // q rounded to nearest (ties to even) and saturated to the type's range.
  int32_t saturated(double q) const {
    return type == DType::kInt8 ? saturate_round<int8_t>(q) : saturate_round<uint8_t>(q);
  }
};

// The scale at input `s` (one float32 value) and the zero point at input `z` (one uint8 or int8
// value; absent, or z < 0: 0 of type `fallback`). `tensor` >= 0: the quantized input the pair
// describes, whose type the zero point must have (and the fallback is). Errors name the values
// `name`_scale and `name`_zero_point.
Status read_qparam(const KernelContext& ctx, const char* name, int s, int z, int tensor, DType fallback,
                   QParam* q);

// Fails naming the first of `ids` that is absent.
Status require_inputs(const KernelContext& ctx, std::initializer_list<int> ids, const char* op);

}  // namespace osprey::ref
