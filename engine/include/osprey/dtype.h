// Element types. Values match ONNX TensorProto.DataType so conversion is a cast.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace osprey {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

// IEEE 754 half precision, stored as bits; arithmetic goes through float.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f) : bits(from_float(f)) {}
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, float>, int> = 0>
  explicit Float16(U v) : Float16(static_cast<float>(v)) {}
  operator float() const { return to_float(bits); }  // NOLINT: implicit widening is intended
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

// bfloat16: the top half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(from_float(f)) {}
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, float>, int> = 0>
  explicit BFloat16(U v) : BFloat16(static_cast<float>(v)) {}
  operator float() const { return to_float(bits); }  // NOLINT
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

size_t dtype_size(DType t);  // bytes per element; sizeof(std::string) for kString
const char* dtype_name(DType t);          // "float32", "int64", ...
bool dtype_from_name(std::string_view name, DType* out);  // inverse of dtype_name
bool dtype_is_valid(DType t);
bool dtype_is_float(DType t);    // f16, bf16, f32, f64
bool dtype_is_integer(DType t);  // signed and unsigned ints (not bool)
bool dtype_is_signed(DType t);

template <class T>
struct dtype_of;
#define OSPREY_DTYPE_OF(T, E) \
  template <>                 \
  struct dtype_of<T> {        \
    static constexpr DType value = DType::E; \
  };
OSPREY_DTYPE_OF(float, kFloat32)
OSPREY_DTYPE_OF(double, kFloat64)
OSPREY_DTYPE_OF(Float16, kFloat16)
OSPREY_DTYPE_OF(BFloat16, kBFloat16)
OSPREY_DTYPE_OF(int8_t, kInt8)
OSPREY_DTYPE_OF(int16_t, kInt16)
OSPREY_DTYPE_OF(int32_t, kInt32)
OSPREY_DTYPE_OF(int64_t, kInt64)
OSPREY_DTYPE_OF(uint8_t, kUInt8)
OSPREY_DTYPE_OF(uint16_t, kUInt16)
OSPREY_DTYPE_OF(uint32_t, kUInt32)
OSPREY_DTYPE_OF(uint64_t, kUInt64)
OSPREY_DTYPE_OF(bool, kBool)
OSPREY_DTYPE_OF(std::string, kString)
#undef OSPREY_DTYPE_OF

template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace osprey
