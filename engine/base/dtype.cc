#include "osprey/dtype.h"

#include <cmath>
#include <string>

namespace osprey {

uint16_t Float16::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal or zero in half
    // value = absx as float; half subnormal unit is 2^-24.
    float af;
    std::memcpy(&af, &absx, 4);
    const float scaled = af * 16777216.0f;  // / 2^-24
    const float r = std::nearbyint(scaled);  // round to nearest even (default mode)
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  // normal: rebias exponent, round mantissa to nearest even
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float Float16::to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal
      float f = static_cast<float>(mant) * (1.0f / 16777216.0f);
      std::memcpy(&x, &f, 4);
      x |= sign;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
    case DType::kUInt16: return 2;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kString: return sizeof(std::string);
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kFloat64: return 8;
    case DType::kUInt32: return 4;
    case DType::kUInt64: return 8;
    case DType::kBFloat16: return 2;
    case DType::kUndefined: return 0;
  }
  return 0;
}

namespace {
struct NameEntry {
  DType t;
  const char* name;
};
constexpr NameEntry kNames[] = {
    {DType::kFloat32, "float32"}, {DType::kUInt8, "uint8"},     {DType::kInt8, "int8"},
    {DType::kUInt16, "uint16"},   {DType::kInt16, "int16"},     {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},     {DType::kString, "string"},   {DType::kBool, "bool"},
    {DType::kFloat16, "float16"}, {DType::kFloat64, "float64"}, {DType::kUInt32, "uint32"},
    {DType::kUInt64, "uint64"},   {DType::kBFloat16, "bfloat16"},
};
}  // namespace

const char* dtype_name(DType t) {
  for (const auto& e : kNames)
    if (e.t == t) return e.name;
  return "undefined";
}

bool dtype_from_name(std::string_view name, DType* out) {
  for (const auto& e : kNames)
    if (name == e.name) {
      *out = e.t;
      return true;
    }
  return false;
}

bool dtype_is_valid(DType t) { return t != DType::kUndefined && dtype_size(t) != 0; }

bool dtype_is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return true;
    default: return false;
  }
}

bool dtype_is_signed(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
      return true;
    default: return dtype_is_float(t);
  }
}

}  // namespace osprey
