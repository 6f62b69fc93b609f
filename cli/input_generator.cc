#include "input_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace osprey::cli {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double unit(uint64_t r) { return static_cast<double>(r >> 11) * 0x1.0p-53; }  // [0, 1)

template <class T>
void fill_float(T* out, int64_t n, std::mt19937_64& rng, Distribution d) {
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (d == Distribution::kUniform) {
      v = -1.0 + 2.0 * unit(rng());
    } else {
      const double u1 = unit(rng()) + 0x1.0p-53;  // (0, 1]: log stays finite
      const double u2 = unit(rng());
      v = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }
    out[i] = T(static_cast<float>(v));
  }
}

template <class T>
void fill_int(T* out, int64_t n, std::mt19937_64& rng, int64_t range) {
  const uint64_t hi = static_cast<uint64_t>(std::numeric_limits<T>::max());
  const uint64_t r = static_cast<uint64_t>(std::max<int64_t>(range, 1));
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(std::min(rng() % r, hi));
}

}  // namespace

uint64_t input_seed(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return splitmix64(seed ^ h);
}

Result<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed, const GeneratorOptions& options) {
  if (dtype == DType::kString) return unimplemented("cannot generate random string data");
  if (!dtype_is_valid(dtype) || dtype == DType::kUndefined)
    return invalid_argument("cannot generate random data of type ", dtype_name(dtype));
  OSPREY_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype, shape, options.max_elements));
  std::mt19937_64 rng(seed);
  const int64_t n = t.numel();
  const Distribution d = options.distribution;
  const int64_t range = options.int_range;
  switch (dtype) {
    case DType::kFloat32: fill_float(t.data<float>(), n, rng, d); break;
    case DType::kFloat64: fill_float(t.data<double>(), n, rng, d); break;
    case DType::kFloat16: fill_float(t.data<Float16>(), n, rng, d); break;
    case DType::kBFloat16: fill_float(t.data<BFloat16>(), n, rng, d); break;
    case DType::kInt8: fill_int(t.data<int8_t>(), n, rng, range); break;
    case DType::kInt16: fill_int(t.data<int16_t>(), n, rng, range); break;
    case DType::kInt32: fill_int(t.data<int32_t>(), n, rng, range); break;
    case DType::kInt64: fill_int(t.data<int64_t>(), n, rng, range); break;
    case DType::kUInt8: fill_int(t.data<uint8_t>(), n, rng, range); break;
    case DType::kUInt16: fill_int(t.data<uint16_t>(), n, rng, range); break;
    case DType::kUInt32: fill_int(t.data<uint32_t>(), n, rng, range); break;
    case DType::kUInt64: fill_int(t.data<uint64_t>(), n, rng, range); break;
    case DType::kBool: {
      auto* p = static_cast<unsigned char*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(rng() >> 63);
      break;
    }
    default: return invalid_argument("cannot generate random data of type ", dtype_name(dtype));
  }
  return t;
}

bool parse_distribution(std::string_view name, Distribution* out) {
  if (name == "uniform") {
    *out = Distribution::kUniform;
  } else if (name == "normal") {
    *out = Distribution::kNormal;
  } else {
    return false;
  }
  return true;
}

const char* distribution_name(Distribution d) { return d == Distribution::kUniform ? "uniform" : "normal"; }

}  // namespace osprey::cli
